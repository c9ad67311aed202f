-- Scheduler events, the fast path: which lines of one block are ordinary events, usable by every
-- rule of scheduler.sql, and their typed fields, found at a fraction of scheduler.sql's cost.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `ordinary` is
-- true where the line is an event as json.dumps writes it (the spec's fields in the spec's order,
-- default or compact separators, no escape) and every value passes scheduler.sql's checks; the
-- typed columns are meaningful only there, and equal what scheduler.sql makes of the line
-- (tests/test_parse_differential.py). BlockParser sends every other line through scheduler.sql,
-- which has the reasons.
-- inputs: as scheduler.sql.
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
        j.type,
        j.ts as ts_text,
        mpg_ts(j.ts) as ts,
        j.job_id,
        j.chips_requested,
        j.chip_generation,
        j.workload_class,
        j.framework,
        j.priority,
        j.owner,
        j.team,
        j.queue,
        j.topology,
        j.allocated_from,
        j.task_index,
        j.chips,
        j.state
    from (
        select
            line,
            raw,
            case when json_valid(raw) then json_transform(raw, '{
                "type": "VARCHAR", "ts": "VARCHAR", "job_id": "VARCHAR",
                "chips_requested": "BIGINT", "chip_generation": "VARCHAR",
                "workload_class": "VARCHAR", "framework": "VARCHAR", "priority": "BIGINT",
                "owner": "VARCHAR", "team": "VARCHAR", "queue": "VARCHAR",
                "topology": "VARCHAR", "allocated_from": "VARCHAR", "task_index": "BIGINT",
                "chips": "BIGINT", "state": "VARCHAR"}') end as j
        from decoded
    )
),

checked as (
    select
        *,
        coalesce(
            not contains(raw, '\')
            and mpg_written_as(raw, concat(
                '{"type": "', "type", '", "ts": "', ts_text, '", "job_id": "', job_id, '"',
                ', "chips_requested": ' || chips_requested,
                ', "chip_generation": "' || chip_generation || '"',
                ', "workload_class": "' || workload_class || '"',
                ', "framework": "' || framework || '"',
                ', "priority": ' || priority,
                ', "owner": "' || owner || '"',
                ', "team": "' || team || '"',
                ', "queue": "' || queue || '"',
                ', "topology": "' || topology || '"',
                ', "allocated_from": "' || allocated_from || '"',
                ', "task_index": ' || task_index,
                ', "chips": ' || chips,
                ', "state": "' || state || '"',
                '}'))
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

-- No WHERE ordinary here: DuckDB pushes such a filter below the projections, parsing each line
-- once per field it reads (8x slower, measured); BlockParser keeps the ordinary rows.
select
    line,
    ordinary,
    "type",
    ts,
    job_id,
    case when "type" = 'JOB_SUBMIT' then chips_requested end as chips_requested,
    case when "type" = 'JOB_SUBMIT' then chip_generation end as chip_generation,
    case when "type" = 'JOB_SUBMIT' then workload_class end as workload_class,
    case when "type" = 'JOB_SUBMIT' then framework end as framework,
    case when "type" = 'JOB_SUBMIT' then priority end as priority,
    case when "type" = 'JOB_SUBMIT' then owner end as owner,
    case when "type" = 'JOB_SUBMIT' then team end as team,
    case when "type" = 'JOB_SUBMIT' then queue end as queue,
    case when "type" = 'JOB_SUBMIT' then topology end as topology,
    case when "type" = 'JOB_SUBMIT' then allocated_from end as allocated_from,
    case when "type" like 'TASK_%' then task_index end as task_index,
    case when "type" = 'TASK_SCHEDULE' then chips end as chips,
    case when "type" = 'JOB_END' then state end as state
from checked
