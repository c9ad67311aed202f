-- goodput_by_size_class: goodput_by_slice with the job size class as a fourth slice column,
-- current metric version.
-- grain: one row per day and combination of size_class, workload_class, framework and
-- chip_generation, where a NULL slice column means "all" (GROUP BY CUBE: every roll-up present;
-- the rows with size_class NULL are goodput_by_slice_current's, up to floating-point rounding).
-- Every ratio is a ratio of sums of chip-seconds (mpg_goodput_ratios, sql/publish/macros.sql).
-- input: views job_days_sized, job_size_classes (its order); the macros of sql/publish/macros.sql,
-- stored in the database.
create or replace view goodput_by_size_class as
with job_days as (
    select * from job_days_sized
),

sums as (
    select
        day,
        metric_version,
        size_class,
        workload_class,
        framework,
        chip_generation,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        sum(ideal_chip_s) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from job_days
    group by day, metric_version, cube (size_class, workload_class, framework, chip_generation)
),

final as (
    select
        * exclude (profiled_chip_s),
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        ))
    from sums
)

select final.*
from final
left join job_size_classes as classes using (size_class)
order by final.day, classes.rank nulls first, final.workload_class nulls first,
    final.framework nulls first, final.chip_generation nulls first
