-- Runtime spans: validate and type lines of one block of a runtime file by the full rule set.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `reason` is
-- the first problem found (NULL: the record is usable). BlockParser sends here the lines
-- runtime_ordinary.sql does not prove usable.
-- `rank` (optional, read on `step` spans only) names the process of a multi-process job that
-- reported the span (docs/trace-format.md).
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $span_kinds, $kinds_with_step (VARCHAR[]);
-- $min_time, $max_time (TIMESTAMPTZ): the instants a record may hold, [min, max).
with fields as (
    -- each field's kind, string and typed value, once
    {{ fields }}
),

typed as (
    select
        *,
        mpg_ts(start_text) as start,
        mpg_ts(end_text) as "end",
        -- `step` is read only for the kinds that have one; elsewhere it is ignored unchecked.
        list_contains($kinds_with_step, kind) as has_step
    from fields
),

checked as (
    select
        *,
        coalesce(
            line_problem,
            mpg_key_problem('job_id', job_id_kind, job_id),
            mpg_int_problem('attempt', attempt_json, attempt_kind, attempt),
            case when attempt < 0 then 'out of range: attempt must be >= 0' end,
            mpg_str_problem('kind', kind_kind),
            mpg_enum_problem('kind', kind, $span_kinds),
            mpg_ts_problem('start', start_kind, start_text, start, $min_time, $max_time),
            mpg_ts_problem('end', end_kind, end_text, "end", $min_time, $max_time),
            case when has_step then mpg_int_problem('step', step_json, step_kind, step) end,
            case when kind = 'step' then mpg_optional(rank_kind, coalesce(
                mpg_int_problem('rank', rank_json, rank_kind, rank),
                case when rank < 0 then 'out of range: rank must be >= 0' end)) end,
            -- each field first, then how the fields relate
            case when "end" < start then 'out of range: end < start' end
        ) as reason
    from typed
)

select
    line,
    raw,
    reason,
    {{ record }}
from checked
