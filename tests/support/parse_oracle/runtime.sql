-- Frozen oracle (tests/support/parse_oracle): a copy of sql/parse at commit 12cf9d5. Do not edit.
-- Runtime spans: validate and type every line of one block of a runtime file.
-- grain: one row per input line, in no particular order. `reason` is the first problem found
-- (NULL: the record is usable).
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $span_kinds, $kinds_with_step (VARCHAR[]);
-- $min_time, $max_time (TIMESTAMPTZ): the instants a record may hold, [min, max).
with objects as (
    select * from mpg_json_objects('lines', '{
            "job_id": "JSON", "attempt": "JSON", "kind": "JSON", "start": "JSON",
            "end": "JSON", "step": "JSON"}')
),

-- each value typed once, then checked
typed as (
    select
        *,
        mpg_int(j.attempt) as attempt,
        mpg_ts(j.start) as start,
        mpg_ts(j."end") as "end",
        mpg_int(j.step) as step
    from objects
),

checked as (
    select
        *,
        coalesce(
            line_problem,
            mpg_key_problem('job_id', j.job_id),
            mpg_int_problem('attempt', j.attempt, attempt),
            case when attempt < 0 then 'out of range: attempt must be >= 0' end,
            mpg_str_problem('kind', j.kind),
            mpg_enum_problem('kind', mpg_str(j.kind), $span_kinds),
            mpg_ts_problem('start', j.start, start, $min_time, $max_time),
            mpg_ts_problem('end', j."end", "end", $min_time, $max_time),
            -- `step` is read only for the kinds that have one; elsewhere it is ignored unchecked.
            case when list_contains($kinds_with_step, mpg_str(j.kind))
                then mpg_int_problem('step', j.step, step) end,
            -- each field first, then how the fields relate
            case when "end" < start then 'out of range: end < start' end
        ) as reason
    from typed
)

select
    line,
    raw,
    reason,
    mpg_str(j.job_id) as job_id,
    attempt,
    mpg_str(j.kind) as kind,
    start,
    "end",
    case when list_contains($kinds_with_step, mpg_str(j.kind)) then step end as step
from checked
