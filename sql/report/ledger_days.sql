-- Where the fleet's chip-time went, day by day: the chip-time ledger summed over jobs.
-- grain: one row per day and ledger category (categories with no chip-time that day left out).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: table chip_time_ledger.
with period as (
    select *
    from chip_time_ledger
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

final as (
    select day, category, sum(chip_s) / 3600 as chip_h
    from period
    group by day, category
    having sum(chip_s) > 0
)

select * from final
order by day, category
