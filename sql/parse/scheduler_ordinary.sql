-- Scheduler events, the fast path: which lines of one block are ordinary events, usable by every
-- rule of scheduler.sql, and their typed fields, found at a fraction of scheduler.sql's cost.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `ordinary` is
-- true where the line is an event as json.dumps writes it (the spec's fields in the spec's order,
-- default or compact separators, no escape) and every value passes scheduler.sql's checks; the
-- typed columns are meaningful only there, and equal what scheduler.sql makes of the line
-- (tests/unit/test_parse_differential.py). BlockParser sends every other line through scheduler.sql,
-- which has the reasons.
-- inputs: as scheduler.sql.
with fields as (
    -- each field typed straight away (mpg_json_typed)
    {{ fields }}
),

checked as (
    select
        *,
        coalesce(
            mpg_written_as(raw, {{ as_written }})
            and list_contains($event_types, "type")
            and mpg_rfc3339(ts_text)
            and mpg_in_window(ts, $min_time, $max_time)
            and job_id <> ''
            -- the fields each type requires (the others are ignored, as in scheduler.sql)
            and case "type"
                when 'JOB_SUBMIT' then
                    mpg_chips_ok(chips_requested)
                    and list_contains($chip_generations, chip_generation)
                    and list_contains($workload_classes, workload_class)
                    and list_contains($frameworks, framework)
                when 'TASK_SCHEDULE' then task_index >= 0 and mpg_chips_ok(chips)
                when 'JOB_END' then list_contains($job_states, state)
                else task_index >= 0
            end,
            false
        ) as ordinary
    from fields
)

select
    line,
    ordinary,
    {{ record }}
from checked
