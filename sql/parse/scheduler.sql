-- Scheduler events: validate and type lines of one block of a scheduler file by the full rule
-- set.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `reason` is
-- the first problem found (NULL: the record is usable); typed columns are meaningful only where
-- `reason` is NULL. BlockParser sends here the lines scheduler_ordinary.sql does not prove usable.
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $event_types, $chip_generations,
-- $workload_classes, $frameworks, $job_states: the allowed values (VARCHAR[]); $min_time,
-- $max_time (TIMESTAMPTZ): the instants a record may hold, [min, max).
with objects as (
    select * from mpg_json_objects('lines', '{
            "type": "JSON", "ts": "JSON", "job_id": "JSON", "chips_requested": "JSON",
            "chip_generation": "JSON", "workload_class": "JSON", "framework": "JSON",
            "priority": "JSON", "owner": "JSON", "team": "JSON", "queue": "JSON",
            "topology": "JSON", "allocated_from": "JSON", "task_index": "JSON", "chips": "JSON",
            "state": "JSON"}')
),

-- each field's kind, string and typed value, once
fields as (
    select
        line,
        raw,
        line_problem,
        mpg_kind(j.type) as type_kind,
        mpg_str(j.type) as "type",
        mpg_kind(j.ts) as ts_kind,
        mpg_str(j.ts) as ts_text,
        mpg_kind(j.job_id) as job_id_kind,
        mpg_str(j.job_id) as job_id,
        j.chips_requested as chips_requested_json,
        mpg_kind(j.chips_requested) as chips_requested_kind,
        mpg_int(j.chips_requested) as chips_requested,
        mpg_kind(j.chip_generation) as chip_generation_kind,
        mpg_str(j.chip_generation) as chip_generation,
        mpg_kind(j.workload_class) as workload_class_kind,
        mpg_str(j.workload_class) as workload_class,
        mpg_kind(j.framework) as framework_kind,
        mpg_str(j.framework) as framework,
        j.priority as priority_json,
        mpg_kind(j.priority) as priority_kind,
        mpg_int(j.priority) as priority,
        mpg_kind(j.owner) as owner_kind,
        mpg_str(j.owner) as owner,
        mpg_kind(j.team) as team_kind,
        mpg_str(j.team) as team,
        mpg_kind(j.queue) as queue_kind,
        mpg_str(j.queue) as queue,
        mpg_kind(j.topology) as topology_kind,
        mpg_str(j.topology) as topology,
        mpg_kind(j.allocated_from) as allocated_from_kind,
        mpg_str(j.allocated_from) as allocated_from,
        j.task_index as task_index_json,
        mpg_kind(j.task_index) as task_index_kind,
        mpg_int(j.task_index) as task_index,
        j.chips as chips_json,
        mpg_kind(j.chips) as chips_kind,
        mpg_int(j.chips) as chips,
        mpg_kind(j.state) as state_kind,
        mpg_str(j.state) as state
    from objects
),

checked as (
    select
        *,
        coalesce(
            line_problem,
            mpg_str_problem('type', type_kind),
            mpg_enum_problem('type', "type", $event_types),
            mpg_ts_problem('ts', ts_kind, ts_text, ts, $min_time, $max_time),
            mpg_key_problem('job_id', job_id_kind, job_id),
            case "type"
                when 'JOB_SUBMIT' then coalesce(
                    mpg_chips_problem(
                        'chips_requested', chips_requested_json, chips_requested_kind,
                        chips_requested),
                    mpg_str_problem('chip_generation', chip_generation_kind),
                    mpg_enum_problem('chip_generation', chip_generation, $chip_generations),
                    mpg_str_problem('workload_class', workload_class_kind),
                    mpg_enum_problem('workload_class', workload_class, $workload_classes),
                    mpg_str_problem('framework', framework_kind),
                    mpg_enum_problem('framework', framework, $frameworks),
                    mpg_optional(priority_kind, mpg_int_problem(
                        'priority', priority_json, priority_kind, priority)),
                    mpg_optional(owner_kind, mpg_str_problem('owner', owner_kind)),
                    mpg_optional(team_kind, mpg_str_problem('team', team_kind)),
                    mpg_optional(queue_kind, mpg_str_problem('queue', queue_kind)),
                    mpg_optional(topology_kind, mpg_str_problem('topology', topology_kind)),
                    mpg_optional(allocated_from_kind,
                        mpg_str_problem('allocated_from', allocated_from_kind)))
                when 'TASK_SCHEDULE' then coalesce(
                    mpg_int_problem('task_index', task_index_json, task_index_kind, task_index),
                    case when task_index < 0 then 'out of range: task_index must be >= 0' end,
                    mpg_chips_problem('chips', chips_json, chips_kind, chips))
                when 'JOB_END' then coalesce(
                    mpg_str_problem('state', state_kind),
                    mpg_enum_problem('state', state, $job_states))
                else coalesce(
                    mpg_int_problem('task_index', task_index_json, task_index_kind, task_index),
                    case when task_index < 0 then 'out of range: task_index must be >= 0' end)
            end
        ) as reason
    from (select *, mpg_ts(ts_text) as ts from fields)
)

select
    line,
    raw,
    reason,
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
