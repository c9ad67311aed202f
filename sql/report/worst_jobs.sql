-- The jobs that lost the most chip-time over the period, split by cause: for the whole fleet and
-- for each value of each slice column, so that the page can go from a slice to its worst jobs.
-- A job's lost chip-time is every ledger category of $losses: everything wanted that did not
-- become ideal work, program loss included where a profile measured it (productive time without a
-- profile, productive_unprofiled, is reported beside it, not counted: its program loss is unknown).
-- grain: one row per job and category of $losses with chip-time (one row with a NULL category for
-- a job that lost none), for the jobs ranked within
-- $fleet_limit of the fleet or within $slice_limit of their chip generation, workload class or
-- framework (ranks by lost chip-hours, ties by job_id).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive; $losses (VARCHAR[]): the ledger categories counted as lost;
--   $fleet_limit, $slice_limit (INTEGER).
-- input: tables job_day_goodput, chip_time_ledger.
with job_days as (
    select *
    from job_day_goodput
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

ledger as (
    select *
    from chip_time_ledger
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

jobs as (
    select
        job_id,
        any_value(workload_class) as workload_class,
        any_value(framework) as framework,
        any_value(chip_generation) as chip_generation,
        any_value(chips_requested) as chips_requested,
        sum(wanted_chip_s) / 3600 as wanted_chip_h,
        sum(productive_chip_s) / 3600 as productive_chip_h
    from job_days
    group by job_id
),

job_categories as (
    select job_id, category, sum(chip_s) / 3600 as chip_h
    from ledger
    group by job_id, category
),

lost as (
    select
        job_id,
        coalesce(sum(chip_h) filter (where list_contains($losses, category)), 0) as lost_chip_h,
        coalesce(sum(chip_h) filter (where category = 'productive_unprofiled'), 0)
            as unprofiled_chip_h
    from job_categories
    group by job_id
),

ranked as (
    select
        jobs.*,
        lost.lost_chip_h,
        lost.unprofiled_chip_h,
        row_number() over (order by lost.lost_chip_h desc, jobs.job_id) as fleet_rank,
        row_number() over (
            partition by jobs.chip_generation order by lost.lost_chip_h desc, jobs.job_id
        ) as chip_generation_rank,
        row_number() over (
            partition by jobs.workload_class order by lost.lost_chip_h desc, jobs.job_id
        ) as workload_class_rank,
        row_number() over (
            partition by jobs.framework order by lost.lost_chip_h desc, jobs.job_id
        ) as framework_rank
    from jobs
    inner join lost using (job_id)
),

kept as (
    select *
    from ranked
    where fleet_rank <= $fleet_limit
        or least(chip_generation_rank, workload_class_rank, framework_rank) <= $slice_limit
),

final as (
    select kept.*, job_categories.category, job_categories.chip_h
    from kept
    left join job_categories
        on kept.job_id = job_categories.job_id
        and list_contains($losses, job_categories.category)
        and job_categories.chip_h <> 0
)

select * from final
order by fleet_rank, category
