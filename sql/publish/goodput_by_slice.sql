-- goodput_by_slice: fleet goodput per slice.
-- grain: one row per day, metric version and combination of workload_class, framework and
-- chip_generation, where a NULL slice column means "all" (GROUP BY CUBE: every roll-up present).
-- Every ratio is a ratio of sums of chip-seconds (mpg_goodput_ratios, sql/publish/macros.sql).
-- input: table job_day_goodput (one row per job, day and metric version); the macros of
-- sql/publish/macros.sql.
with job_days as (
    select * from job_day_goodput
),

sums as (
    select
        day,
        metric_version,
        workload_class,
        framework,
        chip_generation,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        sum(ideal_chip_s) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from job_days
    group by day, metric_version, cube (workload_class, framework, chip_generation)
),

final as (
    select
        * exclude (profiled_chip_s),
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        ))
    from sums
)

select * from final
order by day, metric_version, workload_class nulls first, framework nulls first,
    chip_generation nulls first
