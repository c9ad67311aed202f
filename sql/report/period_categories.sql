-- The period's ledger by category: chip-hours, their share of wanted, dollars and kWh. Its
-- categories other than ideal add up to the period's lost chip-hours and dollars lost
-- (mpg_rollup's lost_chip_s, lost_usd: the same rows).
-- grain: one row per ledger category with chip-time in the period.
-- usd, kwh: over the chip-time whose generation has a price (a board power), NULL where none
-- has; unpriced_chip_h: the chip-hours without a price.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: tables chip_time_ledger, chip_time_cost; the macro mpg_ratio.
with ledger as (
    select *
    from chip_time_ledger
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

costs as (
    select day, job_id, category, usd, kwh
    from chip_time_cost
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

categories as (
    select
        ledger.category,
        sum(ledger.chip_s) / 3600 as chip_h,
        sum(costs.usd) as usd,
        sum(costs.kwh) as kwh,
        coalesce(sum(ledger.chip_s) filter (where costs.usd is null), 0) / 3600 as unpriced_chip_h
    from ledger
    left join costs using (day, job_id, category)
    group by ledger.category
    having sum(ledger.chip_s) > 0
),

final as (
    select *, mpg_ratio(chip_h, sum(chip_h) over ()) as share
    from categories
)

select * from final
order by category
