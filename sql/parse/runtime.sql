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

checked as (
    select
        line,
        raw,
        j,
        coalesce(
            line_problem,
            mpg_key_problem('job_id', j.job_id),
            mpg_int_problem('attempt', j.attempt),
            case when mpg_int(j.attempt) < 0 then 'out of range: attempt must be >= 0' end,
            mpg_str_problem('kind', j.kind),
            mpg_enum_problem('kind', mpg_str(j.kind), $span_kinds),
            mpg_ts_problem('start', j.start, $min_time, $max_time),
            mpg_ts_problem('end', j."end", $min_time, $max_time),
            -- `step` is read only for the kinds that have one; elsewhere it is ignored unchecked.
            case when list_contains($kinds_with_step, mpg_str(j.kind))
                then mpg_int_problem('step', j.step) end,
            -- each field first, then how the fields relate
            case when mpg_ts(j."end") < mpg_ts(j.start) then 'out of range: end < start' end
        ) as reason
    from objects
)

select
    line,
    raw,
    reason,
    mpg_str(j.job_id) as job_id,
    mpg_int(j.attempt) as attempt,
    mpg_str(j.kind) as kind,
    mpg_ts(j.start) as start,
    mpg_ts(j."end") as "end",
    case when list_contains($kinds_with_step, mpg_str(j.kind)) then mpg_int(j.step) end as step
from checked
