-- Profile records, the fast path: which lines of one block are ordinary records, usable by every
-- rule of profiles.sql, and their typed fields, found at a fraction of profiles.sql's cost.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `ordinary` is
-- true where the line is a record as json.dumps writes it (the spec's fields in the spec's order,
-- default or compact separators, no escape; numbers as Python's repr writes them) and every value
-- passes profiles.sql's checks; the typed columns are meaningful only there, and equal what
-- profiles.sql makes of the line (tests/unit/test_parse_differential.py). BlockParser sends every other
-- line through profiles.sql, which has the reasons.
-- inputs: as profiles.sql.
with decoded as (
    select line, try(decode(raw_bytes)) as raw from lines
),

-- Typed straight away. json_transform's casts are lax (8.0 or "8" read as 8, a number read as
-- its text), which is harmless here: a line is ordinary only where it is spelled exactly as
-- json.dumps writes these values. Not JSON: NULL (json_valid first: try() around json_transform
-- is cheaper on ordinary lines but redoes a whole vector row by row for any invalid line, which
-- made a block of broken lines 4x slower than the full rule set).
fields as (
    select
        line,
        raw,
        j.job_id,
        j.ts as ts_text,
        mpg_ts(j.ts) as ts,
        j.step,
        j.step_time_s,
        j.model_flops,
        j.hbm_bytes,
        j.chips,
        j.flops_source
    from (
        select
            line,
            raw,
            case when json_valid(raw) then json_transform(raw, '{
                "job_id": "VARCHAR", "ts": "VARCHAR", "step": "BIGINT",
                "step_time_s": "DOUBLE", "model_flops": "DOUBLE", "hbm_bytes": "DOUBLE",
                "chips": "BIGINT", "flops_source": "VARCHAR"}') end as j
        from decoded
    )
),

checked as (
    select
        *,
        coalesce(
            not contains(raw, '\')
            and mpg_written_as(raw, concat(
                '{"job_id": "', job_id, '", "ts": "', ts_text, '", "step": ', step,
                ', "step_time_s": ', step_time_s, ', "model_flops": ', model_flops,
                ', "hbm_bytes": ' || hbm_bytes, ', "chips": ', chips,
                ', "flops_source": "' || flops_source || '"', '}'))
            and job_id <> ''
            and mpg_rfc3339(ts_text)
            and mpg_in_window(ts, $min_time, $max_time)
            and step is not null
            -- DuckDB writes NaN and infinities as nan and inf, which its reader takes
            and isfinite(step_time_s)
            and step_time_s >= 1e-9
            and isfinite(model_flops)
            and mpg_amount_ok(model_flops)
            and (hbm_bytes is null or isfinite(hbm_bytes) and mpg_amount_ok(hbm_bytes))
            and mpg_chips_ok(chips),
            false
        ) as ordinary
    from fields
)

-- No WHERE ordinary here: DuckDB pushes such a filter below the projections, parsing each line
-- once per field it reads (8x slower, measured); BlockParser keeps the ordinary rows.
select
    line,
    ordinary,
    job_id,
    ts,
    step,
    step_time_s,
    model_flops,
    hbm_bytes,
    chips,
    flops_source
from checked
