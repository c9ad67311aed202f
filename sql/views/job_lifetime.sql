-- job_lifetime: each job's totals over all its days, current metric version.
-- grain: one row per job.
-- Chip-seconds are summed over the job's days and the ratios are ratios of those sums, as for a
-- slice (mpg_goodput_ratios, sql/publish/macros.sql): the job's lifetime row of `mpg explain`.
-- A job's class, framework, generation and size are its own, the same on each of its days.
-- input: view job_days_sized; the macros of sql/publish/macros.sql, stored in the database.
create or replace view job_lifetime as
with job_days as (
    select * from job_days_sized
),

sums as (
    select
        job_id,
        metric_version,
        any_value(workload_class) as workload_class,
        any_value(framework) as framework,
        any_value(chip_generation) as chip_generation,
        any_value(chips_requested) as chips_requested,
        any_value(size_class) as size_class,
        min(day) as first_day,
        max(day) as last_day,
        count(*) as days,
        sum(wanted_chip_s) as wanted_chip_s,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        sum(ideal_chip_s) as ideal_chip_s,
        mpg_profiled_sum(productive_chip_s, pg) as profiled_chip_s
    from job_days
    group by job_id, metric_version
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
order by job_id
