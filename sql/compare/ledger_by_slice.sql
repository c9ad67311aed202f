-- The chip-time ledger rolled up by slice and category over one period, for `mpg compare` (and
-- the report's dollars lost), with its dollars.
-- grain: one row per slice (workload_class, framework, chip_generation) and ledger category with
-- chip-time in the period.
-- usd: the category's dollars (chip_time_cost), NULL where the slice's generation has no price;
-- usd_per_chip_hour: that price (one per slice: a slice is one chip generation's).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE, inclusive).
-- input: tables chip_time_ledger (the categories), chip_time_cost (their dollars) and
-- job_day_goodput (each job-day's slice).
with ledger as (
    select * from chip_time_ledger
    where metric_version = $metric_version and day between $first and $last
),

costs as (
    select day, job_id, category, usd, usd_per_chip_hour
    from chip_time_cost
    where metric_version = $metric_version and day between $first and $last
),

job_days as (
    select day, job_id, workload_class, framework, chip_generation
    from job_day_goodput
    where metric_version = $metric_version and day between $first and $last
),

sliced as (
    select
        job_days.workload_class,
        job_days.framework,
        job_days.chip_generation,
        ledger.category,
        ledger.chip_s,
        costs.usd,
        costs.usd_per_chip_hour
    from ledger
    inner join job_days using (day, job_id)
    left join costs using (day, job_id, category)
),

final as (
    select
        workload_class,
        framework,
        chip_generation,
        category,
        sum(chip_s) as chip_s,
        sum(usd) as usd,
        max(usd_per_chip_hour) as usd_per_chip_hour
    from sliced
    group by workload_class, framework, chip_generation, category
)

select * from final
order by workload_class, framework, chip_generation, category
