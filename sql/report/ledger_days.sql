-- Where the fleet's chip-time went, day by day: the chip-time ledger summed over jobs, with its
-- dollars and kWh.
-- grain: one row per day and ledger category (categories with no chip-time that day left out).
-- usd, kwh: chip_time_cost's over the chip-time whose generation has a price (a board power),
-- NULL where none has; unpriced_chip_h, unpowered_chip_h: the chip-hours without one. kWh are
-- an estimate from board power and PUE.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: the macros mpg_ledger (sql/semantic/ledger.sql), mpg_sum.
with costed as (
    select * from mpg_ledger($metric_version, $first, $last)
),

final as (
    select
        day,
        category,
        mpg_sum(chip_s) / 3600 as chip_h,
        mpg_sum(usd) as usd,
        mpg_sum(kwh) as kwh,
        coalesce(mpg_sum(case when usd is null then chip_s end), 0) / 3600 as unpriced_chip_h,
        coalesce(mpg_sum(case when kwh is null then chip_s end), 0) / 3600 as unpowered_chip_h
    from costed
    group by day, category
    having sum(chip_s) > 0
)

select * from final
order by day, category
