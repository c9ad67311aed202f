-- A scheduler event's typed fields, as both parses of a scheduler line end (scheduler.sql and
-- scheduler_ordinary.sql; mpg.transforms.parse_sql renders this select list into each): a field
-- only on the event types that carry it, NULL on the others (which ignore it unchecked).
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
