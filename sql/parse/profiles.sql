-- Profile records: validate and type lines of one block of a profiles file by the full rule set.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `reason` is
-- the first problem found (NULL: the record is usable). BlockParser sends here the lines
-- profiles_ordinary.sql does not prove usable.
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $min_time, $max_time (TIMESTAMPTZ): the
-- instants a record may hold, [min, max).
with fields as (
    -- each field's kind, string and typed value, once
    {{ fields }}
),

checked as (
    select
        *,
        coalesce(
            line_problem,
            mpg_key_problem('job_id', job_id_kind, job_id),
            mpg_ts_problem('ts', ts_kind, ts_text, ts, $min_time, $max_time),
            mpg_int_problem('step', step_json, step_kind, step),
            mpg_num_problem('step_time_s', step_time_s_kind, step_time_s),
            -- a step under a nanosecond is a unit error; the bound also keeps PG finite
            case when step_time_s <= 0 then 'out of range: step_time_s must be > 0'
                 when step_time_s < 1e-9 then 'out of range: step_time_s below 1e-9'
            end,
            mpg_amount_problem('model_flops', model_flops_kind, model_flops),
            mpg_optional(hbm_bytes_kind,
                mpg_amount_problem('hbm_bytes', hbm_bytes_kind, hbm_bytes)),
            mpg_chips_problem('chips', chips_json, chips_kind, chips),
            mpg_optional(flops_source_kind, mpg_str_problem('flops_source', flops_source_kind))
        ) as reason
    from (select *, mpg_ts(ts_text) as ts from fields)
)

select
    line,
    raw,
    reason,
    {{ record }}
from checked
