-- Runtime spans, the fast path: which lines of one block are ordinary spans, usable by every rule
-- of runtime.sql, and their typed fields, found at a fraction of runtime.sql's cost.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `ordinary` is
-- true where the line is a span as json.dumps writes it (the spec's fields in the spec's order,
-- default or compact separators, no escape) and every value passes runtime.sql's checks; the typed
-- columns are meaningful only there, and equal what runtime.sql makes of the line
-- (tests/unit/test_parse_differential.py). BlockParser sends every other line through runtime.sql, which
-- has the reasons.
-- inputs: as runtime.sql.
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
            and attempt >= 0
            and list_contains($span_kinds, kind)
            and mpg_rfc3339(start_text)
            and mpg_in_window(start, $min_time, $max_time)
            and mpg_rfc3339(end_text)
            and mpg_in_window("end", $min_time, $max_time)
            and "end" >= start
            and (step is not null or not has_step),
            false
        ) as ordinary
    from (
        select
            *,
            list_contains($kinds_with_step, kind) as has_step,
            -- an ordinary line names no rank (a `rank` key makes it one the full rules read)
            null::bigint as rank
        from fields
    )
)

select
    line,
    ordinary,
    {{ record }}
from checked
