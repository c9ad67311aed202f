-- Goodput per job size class over time: how well jobs of each size get their chips (SG).
-- grain: one row per day and size class.
-- parameters: $first, $last (DATE or NULL for an open end): the report's period, inclusive.
-- input: view job_day_goodput_current; the macros of sql/publish/macros.sql.
-- Size classes by chips_requested, in powers of eight: 1, 2-8, 9-64, 65-512, 513+ (defined here
-- only, in `classes`; size_order sorts them).
with period as (
    select *
    from job_day_goodput_current
    where ($first is null or day >= $first) and ($last is null or day <= $last)
),

classes as (
    select
        *,
        case
            when chips_requested <= 1 then '1'
            when chips_requested <= 8 then '2-8'
            when chips_requested <= 64 then '9-64'
            when chips_requested <= 512 then '65-512'
            else '513+'
        end as size_class,
        case
            when chips_requested <= 1 then 1
            when chips_requested <= 8 then 2
            when chips_requested <= 64 then 3
            when chips_requested <= 512 then 4
            else 5
        end as size_order
    from period
),

sums as (
    select
        day,
        size_class,
        size_order,
        count(*) as jobs,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        sum(ideal_chip_s) as ideal_chip_s,
        coalesce(sum(productive_chip_s) filter (where pg is not null), 0) as profiled_chip_s
    from classes
    group by day, size_class, size_order
),

final as (
    select
        day,
        size_class,
        size_order,
        jobs,
        wanted_chip_s,
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        ))
    from sums
)

select * from final
order by size_order, day
