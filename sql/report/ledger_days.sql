-- Where the fleet's chip-time went, day by day: the chip-time ledger summed over jobs, with its
-- dollars and kWh.
-- grain: one row per day and ledger category (categories with no chip-time that day left out).
-- usd, kwh: chip_time_cost's over the chip-time whose generation has a price (a board power),
-- NULL where none has; unpriced_chip_h, unpowered_chip_h: the chip-hours without one. kWh are
-- an estimate from board power and PUE.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: tables chip_time_ledger, chip_time_cost.
with period as (
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

costed as (
    select period.day, period.category, period.chip_s, costs.usd, costs.kwh
    from period
    left join costs using (day, job_id, category)
),

final as (
    select
        day,
        category,
        sum(chip_s) / 3600 as chip_h,
        sum(usd) as usd,
        sum(kwh) as kwh,
        coalesce(sum(chip_s) filter (where usd is null), 0) / 3600 as unpriced_chip_h,
        coalesce(sum(chip_s) filter (where kwh is null), 0) / 3600 as unpowered_chip_h
    from costed
    group by day, category
    having sum(chip_s) > 0
)

select * from final
order by day, category
