-- chip_time_cost: the chip-time ledger in dollars and kWh.
-- grain: one row per row of chip_time_ledger (job, day, metric version, category).
-- usd = chip_s / 3600 x usd_per_chip_hour; kwh = chip_s / 3600 x watts_per_chip / 1000 x pue,
-- each beside the rate and its source; NULL where the job's generation has no price (or power).
-- kWh are an estimate from board power (TDP), not a measurement.
-- inputs: tables chip_time_ledger, job_day_goodput (each job-day's chip_generation) and
-- cost_rates (mpg.schemas.COST_RATES, from mpg.definitions.costs.cost_rates). The ledger is read, never
-- recomputed: a change of price recomputes every day's costs from it.
with ledger as (
    select * from chip_time_ledger
),

job_days as (
    select day, job_id, metric_version, chip_generation from job_day_goodput
),

rates as (
    select * from cost_rates
),

rated as (
    select
        ledger.day,
        ledger.job_id,
        ledger.metric_version,
        ledger.category,
        job_days.chip_generation,
        ledger.chip_s,
        rates.usd_per_chip_hour,
        rates.price_source,
        rates.watts_per_chip,
        rates.power_source,
        -- a generation missing from the rates still has the run's PUE
        coalesce(rates.pue, (select max(pue) from rates)) as pue
    from ledger
    inner join job_days using (day, job_id, metric_version)
    left join rates using (chip_generation)
),

final as (
    select
        day,
        job_id,
        metric_version,
        category,
        chip_generation,
        chip_s,
        chip_s / 3600 * usd_per_chip_hour as usd,
        chip_s / 3600 * watts_per_chip / 1000 * pue as kwh,
        usd_per_chip_hour,
        price_source,
        watts_per_chip,
        power_source,
        pue
    from rated
)

select * from final
order by day, job_id, metric_version, category
