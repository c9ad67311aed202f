-- Profile records: validate and type every line of one block of a profiles file.
-- grain: one row per input line, in no particular order. `reason` is the first problem found
-- (NULL: the record is usable).
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`.
with objects as (
    select * from mpg_json_objects('lines', '{
            "job_id": "JSON", "ts": "JSON", "step": "JSON", "step_time_s": "JSON",
            "model_flops": "JSON", "hbm_bytes": "JSON", "chips": "JSON",
            "flops_source": "JSON"}')
),

checked as (
    select
        line,
        raw,
        j,
        coalesce(
            line_problem,
            mpg_str_problem('job_id', j.job_id),
            mpg_ts_problem('ts', j.ts),
            mpg_int_problem('step', j.step),
            mpg_num_problem('step_time_s', j.step_time_s),
            case when mpg_num(j.step_time_s) <= 0 then 'out of range: step_time_s must be > 0' end,
            mpg_num_problem('model_flops', j.model_flops),
            case when mpg_num(j.model_flops) < 0 then 'out of range: model_flops must be >= 0' end,
            mpg_optional(j.hbm_bytes, coalesce(
                mpg_num_problem('hbm_bytes', j.hbm_bytes),
                case when mpg_num(j.hbm_bytes) < 0 then 'out of range: hbm_bytes must be >= 0' end)),
            mpg_int_problem('chips', j.chips),
            case when mpg_int(j.chips) <= 0 then 'out of range: chips must be > 0' end,
            mpg_optional(j.flops_source, mpg_str_problem('flops_source', j.flops_source))
        ) as reason
    from objects
)

select
    line,
    raw,
    reason,
    mpg_str(j.job_id) as job_id,
    mpg_ts(j.ts) as ts,
    mpg_int(j.step) as step,
    mpg_num(j.step_time_s) as step_time_s,
    mpg_num(j.model_flops) as model_flops,
    mpg_num(j.hbm_bytes) as hbm_bytes,
    mpg_int(j.chips) as chips,
    mpg_str(j.flops_source) as flops_source
from checked
