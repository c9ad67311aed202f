-- One job's published goodput: its job-day rows as published, and its lifetime in one row.
-- grain: one row per day of the job (day set), plus one row for all its days (day NULL).
-- parameters: $job_id (VARCHAR), $metric_version (VARCHAR).
-- The lifetime row sums chip-seconds and takes the ratios of the sums that goodput_by_slice
-- publishes for a slice (mpg_goodput_ratios, sql/publish/macros.sql). Day rows keep the published
-- ratios themselves (the numbers people quote, from the same macro), with the macro's
-- pg_coverage of the one job-day.
-- input: table job_day_goodput; the macros of sql/publish/macros.sql.
with job_days as (
    select *
    from job_day_goodput
    where job_id = $job_id and metric_version = $metric_version
),

day_rows as (
    select
        day,
        workload_class,
        framework,
        chip_generation,
        chips_requested,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        ideal_chip_s,
        mpg_goodput_ratios(
            wanted_chip_s,
            all_allocated_chip_s,
            productive_chip_s,
            ideal_chip_s,
            mpg_profiled(productive_chip_s, pg)
        ).pg_coverage as pg_coverage,
        sg,
        rg,
        pg,
        mpg
    from job_days
),

sums as (
    select
        any_value(workload_class) as workload_class,
        any_value(framework) as framework,
        any_value(chip_generation) as chip_generation,
        any_value(chips_requested) as chips_requested,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        sum(ideal_chip_s) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from job_days
    having count(*) > 0
),

lifetime as (
    select
        null::date as day,
        * exclude (profiled_chip_s),
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        ))
    from sums
),

final as (
    select * from day_rows
    union all
    select * from lifetime
)

select * from final
order by day nulls last
