-- Runtime spans, the fast path: which lines of one block are ordinary spans, usable by every rule
-- of runtime.sql, and their typed fields, found at a fraction of runtime.sql's cost.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `ordinary` is
-- true where the line is a span as json.dumps writes it (the spec's fields in the spec's order,
-- default or compact separators, no escape) and every value passes runtime.sql's checks; the typed
-- columns are meaningful only there, and equal what runtime.sql makes of the line
-- (tests/unit/test_parse_differential.py). BlockParser sends every other line through runtime.sql, which
-- has the reasons.
-- inputs: as runtime.sql.
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
        j.attempt,
        j.kind,
        j.start as start_text,
        j."end" as end_text,
        j.step,
        mpg_ts(j.start) as start,
        mpg_ts(j."end") as "end"
    from (
        select
            line,
            raw,
            case when json_valid(raw) then json_transform(raw, '{
                "job_id": "VARCHAR", "attempt": "BIGINT", "kind": "VARCHAR", "start": "VARCHAR",
                "end": "VARCHAR", "step": "BIGINT"}') end as j
        from decoded
    )
),

checked as (
    select
        *,
        coalesce(
            not contains(raw, '\')
            and mpg_written_as(raw, concat(
                '{"job_id": "', job_id, '", "attempt": ', attempt, ', "kind": "', kind,
                '", "start": "', start_text, '", "end": "', end_text, '"',
                ', "step": ' || step, '}'))
            and job_id <> ''
            and attempt >= 0
            and list_contains($span_kinds, kind)
            and mpg_rfc3339(start_text)
            and mpg_in_window(start, $min_time, $max_time)
            and mpg_rfc3339(end_text)
            and mpg_in_window("end", $min_time, $max_time)
            and "end" >= start
            and (step is not null or not list_contains($kinds_with_step, kind)),
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
    attempt,
    kind,
    start,
    "end",
    case when list_contains($kinds_with_step, kind) then step end as step,
    -- an ordinary line names no rank (a `rank` key makes it one the full rules read)
    null::bigint as rank
from checked
