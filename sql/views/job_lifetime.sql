-- job_lifetime: each job's totals over all its days, current metric version.
-- grain: one row per job.
-- Chip-seconds are summed over the job's days and the ratios are ratios of those sums, as for a
-- slice (mpg_jobs over mpg_rollup, sql/semantic/, read through worst_jobs; mpg_goodput_ratios,
-- sql/publish/macros.sql):
-- the job's lifetime row of `mpg explain`. A job's class, framework, generation and size are its
-- own, the same on each of its days. lost_chip_s and lost_usd are the layer's (every ledger
-- category but ideal; dollars NULL where the job's generation has no price).
-- input: view worst_jobs (the layer's jobs, mpg_jobs, ranked).
create or replace view job_lifetime as
with jobs as (
    select * from worst_jobs
),

final as (
    select
        job_id,
        metric_version,
        workload_class,
        framework,
        chip_generation,
        chips_requested,
        size_class,
        first_day,
        last_day,
        days,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        ideal_chip_s,
        pg_coverage,
        sg,
        rg,
        pg,
        mpg,
        lost_chip_s,
        wanted_usd,
        lost_usd
    from jobs
)

select * from final
order by job_id
