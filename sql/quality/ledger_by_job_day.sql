-- ledger_by_job_day: does each job-day's ledger add up to its wanted chip-time?
-- grain: one row per day, job_id and metric_version found in job_day_goodput or
-- chip_time_ledger; wanted_chip_s is NULL for a ledger job-day that has no job-day row.
-- A float sum is exact only to the magnitude of its terms (a PG far above 1 gives a huge ideal
-- and a huge negative program_loss), so the difference allowed grows with sum(|chip_s|):
-- excess = |ledger - wanted| - ($relative_tolerance * sum(|chip_s|) + $absolute_tolerance),
-- and the ledger adds up where excess <= 0.
-- inputs: tables job_day_goodput, chip_time_ledger; $relative_tolerance, $absolute_tolerance
-- (DOUBLE).
with job_days as (
    select day, job_id, metric_version, wanted_chip_s
    from job_day_goodput
),

ledgers as (
    select
        day,
        job_id,
        metric_version,
        sum(chip_s) as ledger_chip_s,
        sum(abs(chip_s)) as abs_chip_s
    from chip_time_ledger
    group by day, job_id, metric_version
),

paired as (
    select
        day,
        job_id,
        metric_version,
        j.wanted_chip_s,
        coalesce(l.ledger_chip_s, 0) as ledger_chip_s,
        coalesce(l.abs_chip_s, 0) as abs_chip_s
    from job_days as j
    full join ledgers as l using (day, job_id, metric_version)
),

final as (
    select
        *,
        abs(ledger_chip_s - coalesce(wanted_chip_s, 0))
        - ($relative_tolerance * abs_chip_s + $absolute_tolerance) as excess
    from paired
)

select * from final
order by day, job_id, metric_version
