-- mpg_ledger: the chip-time ledger with what each row costs and the slice it belongs to: the
-- semantic layer's facts at the grain of a ledger category (mpg_job_days sums them per job-day).
-- grain: one row per row of chip_time_ledger (job, day, metric version, category) in the period.
-- parameters: p_version (VARCHAR, NULL: every version); p_first, p_last (DATE, NULL: an open end),
--   inclusive.
-- columns: day, job_id, metric_version, category, chip_s; usd and kwh (chip_time_cost's: NULL
--   where the job's generation has no price, no board power), usd_per_chip_hour; the job-day's
--   workload_class, framework and chip_generation.
-- inputs: tables chip_time_ledger, chip_time_cost, job_day_goodput.
create or replace temp macro mpg_ledger(p_version, p_first, p_last) as table
with ledger as (
    select *
    from chip_time_ledger
    where (p_version is null or metric_version = p_version)
        and (p_first is null or day >= p_first) and (p_last is null or day <= p_last)
),

costs as (
    select day, job_id, metric_version, category, usd, usd_per_chip_hour, kwh
    from chip_time_cost
    where (p_version is null or metric_version = p_version)
        and (p_first is null or day >= p_first) and (p_last is null or day <= p_last)
),

slices as (
    select day, job_id, metric_version, workload_class, framework, chip_generation
    from job_day_goodput
    where (p_version is null or metric_version = p_version)
        and (p_first is null or day >= p_first) and (p_last is null or day <= p_last)
),

final as (
    select
        ledger.day,
        ledger.job_id,
        ledger.metric_version,
        ledger.category,
        ledger.chip_s,
        costs.usd,
        costs.usd_per_chip_hour,
        costs.kwh,
        slices.workload_class,
        slices.framework,
        slices.chip_generation
    from ledger
    inner join slices using (day, job_id, metric_version)
    left join costs using (day, job_id, metric_version, category)
)

select * from final
