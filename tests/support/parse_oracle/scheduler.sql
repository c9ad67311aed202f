-- Frozen oracle (tests/support/parse_oracle): a copy of sql/parse at commit 12cf9d5. Do not edit, but
-- for the spec's own changes: JOB_SUBMIT's optional `team` and `queue` (issue 21), as `owner`,
-- and the documented extension `allocated_from` (docs/trace-format.md), the same way.
-- Scheduler events: validate and type every line of one block of a scheduler file.
-- grain: one row per input line, in no particular order. `reason` is the first problem found
-- (NULL: the record is usable);
-- typed columns are meaningful only where `reason` is NULL.
-- inputs: relation `lines(line BIGINT, raw_bytes BLOB)`; $chip_generations, $workload_classes,
-- $frameworks, $job_states: the allowed values (VARCHAR[]); $min_time, $max_time (TIMESTAMPTZ):
-- the instants a record may hold, [min, max).
with objects as (
    select * from mpg_json_objects('lines', '{
            "type": "JSON", "ts": "JSON", "job_id": "JSON", "chips_requested": "JSON",
            "chip_generation": "JSON", "workload_class": "JSON", "framework": "JSON",
            "priority": "JSON", "owner": "JSON", "team": "JSON", "queue": "JSON",
            "topology": "JSON", "allocated_from": "JSON", "task_index": "JSON", "chips": "JSON",
            "state": "JSON"}')
),

-- each value typed once, then checked
typed as (
    select
        *,
        mpg_ts(j.ts) as ts,
        mpg_int(j.chips_requested) as chips_requested,
        mpg_int(j.priority) as priority,
        mpg_int(j.task_index) as task_index,
        mpg_int(j.chips) as chips
    from objects
),

checked as (
    select
        *,
        coalesce(
            line_problem,
            mpg_str_problem('type', j.type),
            mpg_enum_problem('type', mpg_str(j.type), [
                'JOB_SUBMIT', 'TASK_SCHEDULE', 'TASK_EVICT', 'TASK_FAIL', 'TASK_LOST',
                'TASK_FINISH', 'JOB_END']),
            mpg_ts_problem('ts', j.ts, ts, $min_time, $max_time),
            mpg_key_problem('job_id', j.job_id),
            case mpg_str(j.type)
                when 'JOB_SUBMIT' then coalesce(
                    mpg_chips_problem('chips_requested', j.chips_requested, chips_requested),
                    mpg_str_problem('chip_generation', j.chip_generation),
                    mpg_enum_problem('chip_generation', mpg_str(j.chip_generation), $chip_generations),
                    mpg_str_problem('workload_class', j.workload_class),
                    mpg_enum_problem('workload_class', mpg_str(j.workload_class), $workload_classes),
                    mpg_str_problem('framework', j.framework),
                    mpg_enum_problem('framework', mpg_str(j.framework), $frameworks),
                    mpg_optional(j.priority, mpg_int_problem('priority', j.priority, priority)),
                    mpg_optional(j.owner, mpg_str_problem('owner', j.owner)),
                    mpg_optional(j.team, mpg_str_problem('team', j.team)),
                    mpg_optional(j.queue, mpg_str_problem('queue', j.queue)),
                    mpg_optional(j.topology, mpg_str_problem('topology', j.topology)),
                    mpg_optional(j.allocated_from,
                        mpg_str_problem('allocated_from', j.allocated_from)))
                when 'TASK_SCHEDULE' then coalesce(
                    mpg_int_problem('task_index', j.task_index, task_index),
                    case when task_index < 0 then 'out of range: task_index must be >= 0' end,
                    mpg_chips_problem('chips', j.chips, chips))
                when 'JOB_END' then coalesce(
                    mpg_str_problem('state', j.state),
                    mpg_enum_problem('state', mpg_str(j.state), $job_states))
                else coalesce(
                    mpg_int_problem('task_index', j.task_index, task_index),
                    case when task_index < 0 then 'out of range: task_index must be >= 0' end)
            end
        ) as reason
    from typed
)

select
    line,
    raw,
    reason,
    mpg_str(j.type) as "type",
    ts,
    mpg_str(j.job_id) as job_id,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then chips_requested end as chips_requested,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.chip_generation) end as chip_generation,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.workload_class) end as workload_class,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.framework) end as framework,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then priority end as priority,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.owner) end as owner,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.team) end as team,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.queue) end as queue,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.topology) end as topology,
    case when mpg_str(j.type) = 'JOB_SUBMIT' then mpg_str(j.allocated_from) end as allocated_from,
    case when mpg_str(j.type) like 'TASK_%' then task_index end as task_index,
    case when mpg_str(j.type) = 'TASK_SCHEDULE' then chips end as chips,
    case when mpg_str(j.type) = 'JOB_END' then mpg_str(j.state) end as state
from checked
