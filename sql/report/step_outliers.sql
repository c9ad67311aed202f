-- The job-days whose slow steps took the largest share of their productive chip-time: a step
-- slower than the day's median costs (step time - median) x chips beyond a typical step.
-- grain: one row per job-day with at least $min_steps kept steps in the report's period, the
-- $limit with the largest slow_step_share (ties: more slow-step chip-time first, then job and
-- day). A job-day of fewer steps is not ranked: its median and quantiles are a handful of order
-- statistics, and one slow step among twenty is a share of 5% (ml-goodput-measurement, whose
-- step-time deviation this table also carries, looks at windows of 100 steps);
-- job_days_in_period counts those ranked, job_days_too_short those left out.
-- parameters: $metric_version (VARCHAR: each job-day's slice from job_day_goodput); $first,
--   $last (DATE or NULL for an open end): the report's period, inclusive; $limit, $min_steps
--   (INTEGER).
-- input: tables step_time_stats, job_day_goodput.
with period as (
    select *
    from step_time_stats
    where ($first is null or day >= $first) and ($last is null or day <= $last)
),

stats as (
    select *, count(*) filter (where steps < $min_steps) over () as job_days_too_short
    from period
    qualify steps >= $min_steps
),

job_days as (
    select day, job_id, workload_class, framework, chip_generation
    from job_day_goodput
    where metric_version = $metric_version
),

ranked as (
    select
        stats.*,
        job_days.workload_class,
        job_days.framework,
        job_days.chip_generation,
        count(*) over () as job_days_in_period,
        row_number() over (
            order by stats.slow_step_share desc nulls last, stats.slow_step_chip_s desc,
                stats.job_id, stats.day
        ) as share_rank
    from stats
    left join job_days using (day, job_id)
),

final as (
    select * from ranked
    where share_rank <= $limit
)

select * from final
order by share_rank
