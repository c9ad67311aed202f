-- mpg_queue_waiting: where scheduling goodput goes on a shared cluster: per queue (a Slurm
-- partition, a Kueue LocalQueue), the chip-time its jobs spent waiting and how long they waited,
-- per month or over a period.
-- WAITING, defined from the ledger: a job waits while it wants to run and does not hold every
-- chip it asked for, the ledger's `scheduling` category (queueing before it starts, waiting
-- for its chips again after a preemption or a failure, a partial allocation). So
--   waiting_chip_s = the scheduling chip-time (SG's loss, = wanted - all-allocated);
--   a job's waiting time (wait_s) = its scheduling chip-time / its chips requested: the seconds
--     of the period (of the month) it wanted to run without all its chips;
--   interrupted_chip_s = lost_progress + checkpoint_restore chip-time: what interruptions
--     (preemptions and failures: the published tables do not tell them apart) cost once the
--     chips were back: work redone since the last checkpoint, and restoring it.
-- grain: one row per month (or the whole period), metric version, queue (NULL: the input named
--   none, a value of its own) and size class (job_size_classes), plus one per month and queue
--   with size_class NULL: all of the queue's jobs.
-- parameters: p_version (VARCHAR); p_first, p_last (DATE, NULL: an open end), inclusive;
--   p_by_month (BOOLEAN): a row per calendar month, or one for the period (month NULL).
-- columns: month, metric_version, queue, size_class, size_rank (the class's order; NULL for all),
--   jobs (with wanted time), jobs_waiting (with any waiting), wanted_chip_s, waiting_chip_s,
--   waiting_share (of wanted), waiting_usd (the dollars of that chip-time, lost_scheduling_usd;
--   NULL where none of it is priced), unpriced_chip_s, interrupted_chip_s,
--   wait_median_s and wait_p90_s: the 50th and 90th percentiles of the jobs' waiting times,
--   nearest rank (the smallest waiting time that at least half, 90%, of the jobs waited at most;
--   a job that never waited counts, with 0), the same in DuckDB and BigQuery;
--   wait_max_s; sg (all-allocated / wanted).
-- inputs: the macros mpg_job_days (sql/semantic/job_days.sql), mpg_sum, mpg_ratio
-- (sql/publish/macros.sql); view job_size_classes.
create or replace temp macro mpg_queue_waiting(p_version, p_first, p_last, p_by_month) as table
with facts as (
    select
        case when p_by_month then make_date(year(day), month(day), 1) end as month,
        metric_version,
        queue,
        size_class,
        job_id,
        chips_requested,
        wanted_chip_s,
        all_allocated_chip_s,
        scheduling_chip_s,
        lost_scheduling_usd,
        unpriced_chip_s,
        lost_progress_chip_s + checkpoint_restore_chip_s as interrupted_chip_s
    from mpg_job_days(p_version, p_first, p_last)
),

-- each job's waiting over the month (the period): a job's queue and size are its own, the same
-- on all its days
jobs as (
    select
        month,
        metric_version,
        queue,
        size_class,
        job_id,
        mpg_sum(wanted_chip_s) as wanted_chip_s,
        mpg_sum(all_allocated_chip_s) as all_allocated_chip_s,
        mpg_sum(scheduling_chip_s) as waiting_chip_s,
        mpg_sum(lost_scheduling_usd) as waiting_usd,
        mpg_sum(unpriced_chip_s) as unpriced_chip_s,
        mpg_sum(interrupted_chip_s) as interrupted_chip_s,
        mpg_sum(scheduling_chip_s) / max(chips_requested) as wait_s
    from facts
    group by month, metric_version, queue, size_class, job_id
),

ranked as (
    select
        *,
        row_number() over (
            partition by month, metric_version, queue, size_class order by wait_s, job_id
        ) as size_rank_of_wait,
        count(*) over (partition by month, metric_version, queue, size_class) as size_jobs,
        row_number() over (
            partition by month, metric_version, queue order by wait_s, job_id
        ) as queue_rank_of_wait,
        count(*) over (partition by month, metric_version, queue) as queue_jobs
    from jobs
),

sums as (
    select
        month,
        metric_version,
        queue,
        size_class,
        count(*) as jobs,
        count(*) filter (where wait_s > 0) as jobs_waiting,
        mpg_sum(wanted_chip_s) as wanted_chip_s,
        mpg_sum(all_allocated_chip_s) as all_allocated_chip_s,
        mpg_sum(waiting_chip_s) as waiting_chip_s,
        mpg_sum(waiting_usd) as waiting_usd,
        mpg_sum(unpriced_chip_s) as unpriced_chip_s,
        mpg_sum(interrupted_chip_s) as interrupted_chip_s,
        -- nearest rank among the size class's jobs, or among all the queue's
        case when grouping(size_class) = 0
            then min(wait_s) filter (where size_rank_of_wait >= ceil(0.5 * size_jobs))
            else min(wait_s) filter (where queue_rank_of_wait >= ceil(0.5 * queue_jobs))
        end as wait_median_s,
        case when grouping(size_class) = 0
            then min(wait_s) filter (where size_rank_of_wait >= ceil(0.9 * size_jobs))
            else min(wait_s) filter (where queue_rank_of_wait >= ceil(0.9 * queue_jobs))
        end as wait_p90_s,
        max(wait_s) as wait_max_s
    from ranked
    group by month, metric_version, queue, grouping sets ((size_class), ())
),

classes as (
    select size_class, rank from job_size_classes
),

final as (
    select
        sums.month,
        sums.metric_version,
        sums.queue,
        sums.size_class,
        classes.rank as size_rank,
        sums.jobs,
        sums.jobs_waiting,
        sums.wanted_chip_s,
        sums.waiting_chip_s,
        mpg_ratio(sums.waiting_chip_s, sums.wanted_chip_s) as waiting_share,
        sums.waiting_usd,
        sums.unpriced_chip_s,
        sums.interrupted_chip_s,
        sums.wait_median_s,
        sums.wait_p90_s,
        sums.wait_max_s,
        mpg_ratio(sums.all_allocated_chip_s, sums.wanted_chip_s) as sg
    from sums
    left join classes using (size_class)
)

select * from final
