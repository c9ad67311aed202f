-- The chip-time ledger rolled up by period, slice and category, for `mpg compare`, with its
-- dollars.
-- grain: one row per period ('base' or 'current'), slice (workload_class, framework,
-- chip_generation) and ledger category with chip-time in that period.
-- usd: the category's dollars (chip_time_cost), NULL where the slice's generation has no price;
-- usd_per_chip_hour: that price (one per slice: a slice is one chip generation's).
-- parameters: $metric_version (VARCHAR); $base_first, $base_last, $current_first, $current_last
-- (DATE, each range inclusive).
-- input: tables chip_time_ledger (the categories), chip_time_cost (their dollars) and
-- job_day_goodput (each job-day's slice).
with ledger as (
    select * from chip_time_ledger
    where metric_version = $metric_version
),

costs as (
    select day, job_id, category, usd, usd_per_chip_hour
    from chip_time_cost
    where metric_version = $metric_version
),

job_days as (
    select day, job_id, workload_class, framework, chip_generation
    from job_day_goodput
    where metric_version = $metric_version
),

in_periods as (
    select
        case
            when ledger.day between $base_first and $base_last then 'base'
            when ledger.day between $current_first and $current_last then 'current'
        end as period,
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
        period,
        workload_class,
        framework,
        chip_generation,
        category,
        sum(chip_s) as chip_s,
        sum(usd) as usd,
        max(usd_per_chip_hour) as usd_per_chip_hour
    from in_periods
    where period is not null
    group by period, workload_class, framework, chip_generation, category
)

select * from final
order by period, workload_class, framework, chip_generation, category
