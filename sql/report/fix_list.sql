-- The fix list: the jobs that lost the most over the period (the layer's one ranking, mpg_jobs),
-- each with its main loss and what the data says about it, for the page to name one action.
-- grain: one row per job of rank <= $limit.
-- Beside mpg_jobs' columns (the job's figures, main_loss, attainable_pg and its gap), from the
-- job's accepted scheduler events, what its scheduling loss was:
--   queued_chip_s: the chip-time it wanted in the period before its first task got chips
--     (JOB_SUBMIT to the first TASK_SCHEDULE, or to its end or the period's if it never got
--     any), at most its scheduling chip-time; the rest of that loss came after it started;
--   evictions, tasks_lost, task_failures: its TASK_EVICT, TASK_LOST and TASK_FAIL events;
--   scheduling_cause: 'queueing' where at least half its scheduling chip-time was before it
--     started, else 'preemption' where a task was evicted or lost, else 'partial_allocation'
--     (it started without all its chips, and nothing took any away); NULL without scheduling
--     loss, or where the job's events are not at hand (no record store: no JOB_SUBMIT).
-- And the job's checkpoint advice (mpg_advice, over its whole life; NULL for a job without one):
--   advice, the intervals observed and advised in steps between saves and in seconds with the
--   advised one's interval of confidence, the interruptions and MTBI it rests on, and what the
--   advised setting would save (chip-hours, dollars).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE): the report's period, inclusive;
--   $limit (INTEGER).
-- input: the macros mpg_jobs, mpg_advice; relation scheduler_records: the jobs' accepted
-- scheduler events (SCHEDULER_EVENTS).
with jobs as (
    select * from mpg_jobs($metric_version, $first, $last)
    where rank <= $limit
),

period as (
    select
        epoch_us(cast($first as timestamp)) as start_us,
        epoch_us(cast($last as timestamp) + interval 1 day) as end_us
),

events as (
    select job_id, type, epoch_us(ts) as ts_us
    from scheduler_records
    where job_id in (select job_id from jobs)
),

evidence as (
    select
        job_id,
        min(ts_us) filter (where type = 'JOB_SUBMIT') as submitted_us,
        min(ts_us) filter (where type = 'TASK_SCHEDULE') as first_scheduled_us,
        min(ts_us) filter (where type = 'JOB_END') as ended_us,
        count(*) filter (where type = 'TASK_EVICT') as evictions,
        count(*) filter (where type = 'TASK_LOST') as tasks_lost,
        count(*) filter (where type = 'TASK_FAIL') as task_failures
    from events
    group by job_id
),

advice as (
    select
        job_id,
        advice,
        interruptions,
        mtbi_s,
        mtbi_low_s,
        mtbi_high_s,
        confidence,
        observed_interval_s,
        observed_interval_steps,
        advised_interval_s,
        advised_interval_low_s,
        advised_interval_high_s,
        advised_interval_steps,
        chip_hours_saved,
        usd_saved
    from mpg_advice(null, null)
    where job_id in (select job_id from jobs)
),

queued as (
    select
        jobs.*,
        advice.* exclude (job_id),
        coalesce(evidence.evictions, 0) as evictions,
        coalesce(evidence.tasks_lost, 0) as tasks_lost,
        coalesce(evidence.task_failures, 0) as task_failures,
        case when evidence.submitted_us is not null then least(
            jobs.scheduling_chip_s,
            greatest(
                0,
                least(
                    coalesce(evidence.first_scheduled_us, evidence.ended_us, period.end_us),
                    period.end_us
                ) - greatest(evidence.submitted_us, period.start_us)
            ) / 1e6 * jobs.chips_requested
        ) end as queued_chip_s
    from jobs
    cross join period
    left join evidence using (job_id)
    left join advice using (job_id)
),

final as (
    select
        *,
        case
            when scheduling_chip_s = 0 or queued_chip_s is null then null
            when queued_chip_s >= scheduling_chip_s / 2 then 'queueing'
            when evictions + tasks_lost > 0 then 'preemption'
            else 'partial_allocation'
        end as scheduling_cause
    from queued
)

select * from final
order by rank
