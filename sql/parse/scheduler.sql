-- Scheduler events: validate and type lines of one block of a scheduler file by the full rule
-- set.
-- grain: one row per input line, in no particular order (BlockParser sorts by line). `reason` is
-- the first problem found (NULL: the record is usable); typed columns are meaningful only where
-- `reason` is NULL. BlockParser sends here the lines scheduler_ordinary.sql does not prove usable.
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $event_types, $chip_generations,
-- $workload_classes, $frameworks, $job_states: the allowed values (VARCHAR[]); $min_time,
-- $max_time (TIMESTAMPTZ): the instants a record may hold, [min, max).
with fields as (
    -- each field's kind, string and typed value, once
    {{ fields }}
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
    {{ record }}
from checked
