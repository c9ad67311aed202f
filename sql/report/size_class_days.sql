-- Goodput per job size class over time: how well jobs of each size get their chips (SG).
-- grain: one row per day and size class.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: table job_day_goodput; view job_size_classes (sql/views/: where the class bounds live);
-- the macros of sql/publish/macros.sql.
with job_days as (
    select *
    from job_day_goodput
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

classes as (
    select
        job_days.*,
        size_classes.size_class,
        size_classes.rank as size_order
    from job_days
    inner join job_size_classes as size_classes
        on job_days.chips_requested >= size_classes.min_chips
        and (size_classes.max_chips is null or job_days.chips_requested <= size_classes.max_chips)
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
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
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
