-- Chip-time sums per slice over one period, the inputs of `mpg compare`'s decomposition (and of
-- the report's dollars lost).
-- grain: one row per slice (workload_class, framework, chip_generation: goodput_by_slice's finest
-- cells) with job-days in the period.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE, inclusive).
-- `ideal_chip_s` and `profiled_chip_s` cover only the job-days that have a PG, as PG's numerator
-- and denominator do in goodput_by_slice (sql/publish/goodput_by_slice.sql).
-- input: table job_day_goodput; the macros of sql/publish/macros.sql.
with job_days as (
    select * from job_day_goodput
    where metric_version = $metric_version and day between $first and $last
),

final as (
    select
        workload_class,
        framework,
        chip_generation,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        coalesce(sum(ideal_chip_s) filter (where pg is not null), 0) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from job_days
    group by workload_class, framework, chip_generation
)

select * from final
order by workload_class, framework, chip_generation
