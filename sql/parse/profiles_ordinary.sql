-- Profile records, the fast path: which lines of one block are ordinary records, usable by every
-- rule of profiles.sql, and their typed fields, found at a fraction of profiles.sql's cost.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `ordinary` is
-- true where the line is a record as json.dumps writes it (the spec's fields in the spec's order,
-- default or compact separators, no escape; numbers as Python's repr writes them) and every value
-- passes profiles.sql's checks; the typed columns are meaningful only there, and equal what
-- profiles.sql makes of the line (tests/unit/test_parse_differential.py). BlockParser sends every other
-- line through profiles.sql, which has the reasons.
-- inputs: as profiles.sql.
with fields as (
    -- each field typed straight away (mpg_json_typed)
    {{ fields }}
),

checked as (
    select
        *,
        coalesce(
            mpg_written_as(raw, {{ as_written }})
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

select
    line,
    ordinary,
    {{ record }}
from checked
