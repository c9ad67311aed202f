-- worst_jobs: every job ranked by what it lost over its lifetime, with where it went and what
-- it could attain, current metric version.
-- grain: one row per job.
-- rank: the layer's one ranking of worst jobs (mpg_jobs, sql/semantic/jobs.sql): dollars lost,
-- most first, jobs of a generation without a price after the priced ones (among themselves by
-- chip-hours lost), then chip-hours lost, then job id. The report's worst jobs and fix list and
-- `mpg explain` use the same.
-- lost_chip_s (lost_usd): every ledger category but ideal, wanted - ideal: the four parts
-- lost_scheduling_*, lost_runtime_* (runtime_idle, lost_progress, checkpoint_save,
-- checkpoint_restore, compile, init, data_wait), lost_program_* (program_loss) and
-- lost_unprofiled_* (productive_unprofiled: a job without profiles shows its unprofiled chip-time
-- here, it is not dropped); <category>_chip_s each category; main_loss the largest.
-- Dollars at the job's price, usd_per_chip_hour; all NULL where its chip generation has none.
-- attainable_pg: what the best jobs of its generation, framework and class reach (their
-- chip-time-weighted 90th percentile PG, over attainable_jobs jobs, NULL under 5), and the
-- program loss it would not have had there (recoverable_chip_s, recoverable_usd).
-- team, queue, owner: the job's (job_day_goodput's; NULL where the input named none).
-- Its days (first_day, last_day, days) and chip-time sums are the job's lifetime (job_lifetime
-- is this view in job order).
-- input: the macro mpg_jobs; view current_metric_version.
create or replace view worst_jobs as
with jobs as (
    select * from mpg_jobs((select metric_version from current_metric_version), null, null)
),

final as (
    select
        rank,
        job_id,
        metric_version,
        workload_class,
        framework,
        chip_generation,
        chips_requested,
        size_class,
        team,
        queue,
        owner,
        first_day,
        last_day,
        days,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        ideal_chip_s,
        lost_chip_s,
        lost_share,
        lost_scheduling_chip_s,
        lost_runtime_chip_s,
        lost_program_chip_s,
        lost_unprofiled_chip_s,
        scheduling_chip_s,
        runtime_idle_chip_s,
        lost_progress_chip_s,
        checkpoint_save_chip_s,
        checkpoint_restore_chip_s,
        compile_chip_s,
        init_chip_s,
        data_wait_chip_s,
        program_loss_chip_s,
        productive_unprofiled_chip_s,
        main_loss,
        sg,
        rg,
        pg,
        pg_coverage,
        mpg,
        attainable_pg,
        attainable_jobs,
        recoverable_chip_s,
        usd_per_chip_hour,
        wanted_usd,
        lost_usd,
        lost_scheduling_usd,
        lost_runtime_usd,
        lost_program_usd,
        lost_unprofiled_usd,
        recoverable_usd
    from jobs
)

select * from final
order by rank
