-- Frozen oracle (tests/support/parse_oracle): a copy of sql/parse at commit 12cf9d5. Do not edit.
-- Profile records: validate and type every line of one block of a profiles file.
-- grain: one row per input line, in no particular order. `reason` is the first problem found
-- (NULL: the record is usable).
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $min_time, $max_time (TIMESTAMPTZ): the
-- instants a record may hold, [min, max).
with objects as (
    select * from mpg_json_objects('lines', '{
            "job_id": "JSON", "ts": "JSON", "step": "JSON", "step_time_s": "JSON",
            "model_flops": "JSON", "hbm_bytes": "JSON", "chips": "JSON",
            "flops_source": "JSON"}')
),

-- each value typed once, then checked
typed as (
    select
        *,
        mpg_ts(j.ts) as ts,
        mpg_int(j.step) as step,
        mpg_num(j.step_time_s) as step_time_s,
        mpg_num(j.model_flops) as model_flops,
        mpg_num(j.hbm_bytes) as hbm_bytes,
        mpg_int(j.chips) as chips
    from objects
),

checked as (
    select
        *,
        coalesce(
            line_problem,
            mpg_key_problem('job_id', j.job_id),
            mpg_ts_problem('ts', j.ts, ts, $min_time, $max_time),
            mpg_int_problem('step', j.step, step),
            mpg_num_problem('step_time_s', j.step_time_s, step_time_s),
            -- a step under a nanosecond is a unit error; the bound also keeps PG finite
            case when step_time_s <= 0 then 'out of range: step_time_s must be > 0'
                 when step_time_s < 1e-9 then 'out of range: step_time_s below 1e-9'
            end,
            mpg_amount_problem('model_flops', j.model_flops, model_flops),
            mpg_optional(j.hbm_bytes, mpg_amount_problem('hbm_bytes', j.hbm_bytes, hbm_bytes)),
            mpg_chips_problem('chips', j.chips, chips),
            mpg_optional(j.flops_source, mpg_str_problem('flops_source', j.flops_source))
        ) as reason
    from typed
)

select
    line,
    raw,
    reason,
    mpg_str(j.job_id) as job_id,
    ts,
    step,
    step_time_s,
    model_flops,
    hbm_bytes,
    chips,
    mpg_str(j.flops_source) as flops_source
from checked
