-- The owners of some jobs, as their accepted JOB_SUBMIT records name them (the published tables
-- do not carry owners; the record store does).
-- grain: one row per job that has a JOB_SUBMIT with an owner.
-- input: relation scheduler_records: the jobs' accepted scheduler events (SCHEDULER_EVENTS).
-- A job has one accepted JOB_SUBMIT; (file, line) breaks any tie all the same.
with submits as (
    select job_id, owner, file, line
    from scheduler_records
    where type = 'JOB_SUBMIT' and owner is not null
),

final as (
    select job_id, arg_min(owner, (file, line)) as owner
    from submits
    group by job_id
)

select * from final
order by job_id
