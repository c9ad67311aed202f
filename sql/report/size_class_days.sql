-- Goodput per job size class over time: how well jobs of each size get their chips (SG).
-- grain: one row per day and size class.
-- parameters: $first, $last (DATE or NULL for an open end): the report's period, inclusive.
-- input: views job_days_sized and job_size_classes (sql/views/: where the class bounds live);
-- the macros of sql/publish/macros.sql.
with classes as (
    select
        sized.*,
        size_classes.rank as size_order
    from job_days_sized as sized
    inner join job_size_classes as size_classes using (size_class)
    where ($first is null or sized.day >= $first) and ($last is null or sized.day <= $last)
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
