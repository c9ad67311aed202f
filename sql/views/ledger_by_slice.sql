-- ledger_by_slice: the chip-time ledger rolled up by slice and category, current metric version.
-- grain: one row per day, combination of size_class, workload_class, framework and
-- chip_generation (a NULL slice column means "all": GROUP BY CUBE, every roll-up present), and
-- ledger category; a category with no chip-time in the slice that day has no row.
-- share: the category's part of the slice's wanted chip-time that day (the ledger adds up to
-- wanted time, so a slice-day's shares add up to 1).
-- usd, kwh: the category's dollars and kWh (chip_time_cost) over the chip-time whose generation has
-- a price (a board power); unpriced_chip_s, unpowered_chip_s: the chip-time without one, never
-- guessed (usd NULL where none of it is priced). kWh are an estimate from board power and PUE.
-- input: views chip_time_ledger_current, chip_time_cost_current, job_day_facts, job_size_classes
-- (its order); mpg_ratio (sql/publish/macros.sql, stored in the database).
create or replace view ledger_by_slice as
with ledger as (
    select * from chip_time_ledger_current
),

costs as (
    select day, job_id, metric_version, category, usd, kwh from chip_time_cost_current
),

job_days as (
    select * from job_day_facts
),

sized_ledger as (
    select
        ledger.day,
        ledger.metric_version,
        job_days.size_class,
        job_days.workload_class,
        job_days.framework,
        job_days.chip_generation,
        ledger.category,
        ledger.chip_s,
        costs.usd,
        costs.kwh
    from ledger
    inner join job_days using (day, job_id, metric_version)
    left join costs using (day, job_id, metric_version, category)
),

sums as (
    select
        day,
        metric_version,
        size_class,
        workload_class,
        framework,
        chip_generation,
        category,
        sum(chip_s) as chip_s,
        sum(usd) as usd,
        coalesce(sum(chip_s) filter (where usd is null), 0) as unpriced_chip_s,
        sum(kwh) as kwh,
        coalesce(sum(chip_s) filter (where kwh is null), 0) as unpowered_chip_s
    from sized_ledger
    group by
        day, metric_version, category,
        cube (size_class, workload_class, framework, chip_generation)
),

final as (
    select
        day,
        metric_version,
        size_class,
        workload_class,
        framework,
        chip_generation,
        category,
        chip_s,
        mpg_ratio(chip_s, sum(chip_s) over (
            partition by day, metric_version, size_class, workload_class, framework,
                chip_generation
        )) as share,
        usd,
        unpriced_chip_s,
        kwh,
        unpowered_chip_s
    from sums
)

select final.*
from final
left join job_size_classes as classes using (size_class)
order by final.day, classes.rank nulls first, final.workload_class nulls first,
    final.framework nulls first, final.chip_generation nulls first, final.category
