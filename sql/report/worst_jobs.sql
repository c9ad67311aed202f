-- The jobs that lost the most chip-time over the period: wanted but not productive chip-hours.
-- grain: one row per job, the $limit jobs with the most lost chip-hours (ties by job_id).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive;
--   $limit (INTEGER).
-- input: table job_day_goodput.
with period as (
    select *
    from job_day_goodput
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
    from period
    group by job_id
),

final as (
    select *, wanted_chip_h - productive_chip_h as lost_chip_h
    from jobs
)

select * from final
order by lost_chip_h desc, job_id
limit $limit
