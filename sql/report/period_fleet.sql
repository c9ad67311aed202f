-- The fleet over the whole period, for the report's opening line: chip-time sums and their ratios.
-- The sums let the page reconcile MPG with the ledger: ideal / wanted = MPG x pg_coverage, since
-- PG is measured on profiled productive time only.
-- grain: one row (the period's sums; zero job-days give zero sums and NULL ratios).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: table job_day_goodput; the macros of sql/publish/macros.sql.
with job_days as (
    select *
    from job_day_goodput
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

sums as (
    select
        count(*) as job_days,
        count(distinct job_id) as jobs,
        coalesce(sum(wanted_chip_s), 0) as wanted_chip_s,
        coalesce(sum(all_allocated_chip_s), 0) as all_allocated_chip_s,
        coalesce(sum(productive_chip_s), 0) as productive_chip_s,
        coalesce(sum(ideal_chip_s), 0) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from job_days
),

final as (
    select
        job_days,
        jobs,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        ideal_chip_s,
        profiled_chip_s,
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        ))
    from sums
)

select * from final
