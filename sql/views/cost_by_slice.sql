-- cost_by_slice: what each slice's chip-time cost, in dollars and kWh, current metric version.
-- grain: one row per day and combination of size_class, workload_class, framework and
-- chip_generation, where a NULL slice column means "all" (GROUP BY CUBE: every roll-up present,
-- as in goodput_by_size_class).
-- Dollars cover only the job-days whose chip generation has a price (chip_time_cost's usd is NULL
-- otherwise): their chip-time is priced_chip_s, the rest unpriced_chip_s, never guessed; usd is
-- NULL where nothing in the slice is priced. Likewise kwh and unpowered_chip_s for board power.
-- kWh are an estimate from board power (TDP) and PUE, not a measurement.
-- mpg_usd is MPG over the priced job-days with each chip-second weighted by its price: the
-- published ratios (mpg_ratio of sums) of price x chip-time, so the slice's own MPG wherever one
-- price covers it (one chip generation). mpg_lost_usd = usd x (1 - mpg_usd): the dollars that MPG
-- counts as not becoming ideal work (usd - ideal_usd where every priced productive chip-second has
-- a profile; otherwise unprofiled productive time counts at the profiled PG, as MPG counts it).
-- input: views job_days_sized, chip_time_cost_current, job_size_classes (its order); mpg_ratio
-- (sql/publish/macros.sql, stored in the database).
create or replace view cost_by_slice as
with job_days as (
    select * from job_days_sized
),

costs as (
    select * from chip_time_cost_current
),

job_day_costs as (
    select
        day,
        job_id,
        metric_version,
        -- one generation per job-day, so one rate
        any_value(usd_per_chip_hour) as usd_per_chip_hour,
        sum(usd) as usd,
        sum(usd) filter (where category = 'ideal') as ideal_usd,
        sum(kwh) as kwh,
        bool_and(kwh is not null) as powered
    from costs
    group by day, job_id, metric_version
),

priced as (
    select
        job_days.day,
        job_days.metric_version,
        job_days.size_class,
        job_days.workload_class,
        job_days.framework,
        job_days.chip_generation,
        job_days.wanted_chip_s,
        job_day_costs.usd_per_chip_hour / 3600 as usd_per_chip_s,
        job_day_costs.usd,
        job_day_costs.ideal_usd,
        job_day_costs.kwh,
        coalesce(job_day_costs.powered, false) as powered,
        job_days.all_allocated_chip_s,
        job_days.productive_chip_s,
        job_days.ideal_chip_s,
        job_days.pg
    from job_days
    left join job_day_costs using (day, job_id, metric_version)
),

sums as (
    select
        day,
        metric_version,
        size_class,
        workload_class,
        framework,
        chip_generation,
        sum(wanted_chip_s) as wanted_chip_s,
        coalesce(sum(wanted_chip_s) filter (where usd_per_chip_s is not null), 0)
            as priced_chip_s,
        coalesce(sum(wanted_chip_s) filter (where usd_per_chip_s is null), 0) as unpriced_chip_s,
        sum(usd) as usd,
        sum(coalesce(ideal_usd, 0)) filter (where usd_per_chip_s is not null) as ideal_usd,
        sum(usd_per_chip_s * wanted_chip_s) as wanted_price_chip_s,
        sum(usd_per_chip_s * all_allocated_chip_s) as all_allocated_price_chip_s,
        sum(usd_per_chip_s * productive_chip_s) as productive_price_chip_s,
        sum(usd_per_chip_s * ideal_chip_s) filter (where pg is not null) as ideal_price_chip_s,
        sum(usd_per_chip_s * productive_chip_s) filter (where pg is not null)
            as profiled_price_chip_s,
        sum(kwh) as kwh,
        coalesce(sum(wanted_chip_s) filter (where not powered), 0) as unpowered_chip_s
    from priced
    group by day, metric_version, cube (size_class, workload_class, framework, chip_generation)
),

ratios as (
    select
        *,
        mpg_ratio(all_allocated_price_chip_s, wanted_price_chip_s)
        * mpg_ratio(productive_price_chip_s, all_allocated_price_chip_s)
        * mpg_ratio(ideal_price_chip_s, profiled_price_chip_s) as mpg_usd
    from sums
),

final as (
    select
        day,
        metric_version,
        size_class,
        workload_class,
        framework,
        chip_generation,
        wanted_chip_s,
        priced_chip_s,
        unpriced_chip_s,
        usd,
        mpg_ratio(usd * 3600, priced_chip_s) as usd_per_chip_hour,
        ideal_usd,
        mpg_usd,
        usd * (1 - mpg_usd) as mpg_lost_usd,
        kwh,
        unpowered_chip_s
    from ratios
)

select final.*
from final
left join job_size_classes as classes using (size_class)
order by final.day, classes.rank nulls first, final.workload_class nulls first,
    final.framework nulls first, final.chip_generation nulls first
