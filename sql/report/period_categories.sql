-- The period's ledger by category: chip-hours, their share of wanted, dollars and kWh. Its
-- categories other than ideal add up to the period's lost chip-hours and dollars lost
-- (mpg_rollup's lost_chip_s, lost_usd: the same rows).
-- grain: one row per ledger category with chip-time in the period.
-- usd, kwh: over the chip-time whose generation has a price (a board power), NULL where none
-- has; unpriced_chip_h: the chip-hours without a price.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: the macros mpg_ledger (sql/semantic/ledger.sql), mpg_sum, mpg_ratio.
with categories as (
    select
        category,
        mpg_sum(chip_s) / 3600 as chip_h,
        mpg_sum(usd) as usd,
        mpg_sum(kwh) as kwh,
        coalesce(mpg_sum(case when usd is null then chip_s end), 0) / 3600 as unpriced_chip_h
    from mpg_ledger($metric_version, $first, $last)
    group by category
    having sum(chip_s) > 0
),

final as (
    select *, mpg_ratio(chip_h, sum(chip_h) over ()) as share
    from categories
)

select * from final
order by category
