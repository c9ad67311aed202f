-- Chip-time sums per period and slice, the inputs of `mpg compare`'s decomposition.
-- grain: one row per period ('base' or 'current') and slice (workload_class, framework,
-- chip_generation: goodput_by_slice's finest cells) with job-days in that period.
-- parameters: $metric_version (VARCHAR); $base_first, $base_last, $current_first, $current_last
-- (DATE, each range inclusive).
-- `ideal_chip_s` and `profiled_chip_s` cover only the job-days that have a PG, as PG's numerator
-- and denominator do in goodput_by_slice (sql/publish/goodput_by_slice.sql).
-- input: table job_day_goodput; the macros of sql/publish/macros.sql.
with job_days as (
    select * from job_day_goodput
    where metric_version = $metric_version
),

in_periods as (
    select
        case
            when day between $base_first and $base_last then 'base'
            when day between $current_first and $current_last then 'current'
        end as period,
        *
    from job_days
),

final as (
    select
        period,
        workload_class,
        framework,
        chip_generation,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        coalesce(sum(ideal_chip_s) filter (where pg is not null), 0) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from in_periods
    where period is not null
    group by period, workload_class, framework, chip_generation
)

select * from final
order by period, workload_class, framework, chip_generation
