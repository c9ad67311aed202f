-- One job's published goodput from the semantic layer: each of its job-days (mpg_job_days: the
-- published ratios, the numbers people quote), and its lifetime in one row (mpg_jobs: ratios of
-- its sums, as for any slice, its rank among the fleet's jobs), each with what it lost in
-- chip-time and dollars (every ledger category but ideal, in four parts) and the shares of
-- wanted chip-time the explanation's waterfall steps through.
-- grain: one row per day of the job (day set), plus one row for all its days (day NULL).
-- parameters: $job_id (VARCHAR), $metric_version (VARCHAR).
-- input: the macros mpg_job_days (sql/semantic/job_days.sql), mpg_jobs (sql/semantic/jobs.sql),
-- mpg_goodput_ratios, mpg_ratio, mpg_main_loss (sql/publish/macros.sql).
with job_days as (
    select *
    from mpg_job_days($metric_version, null, null)
    where job_id = $job_id
),

day_rows as (
    select
        day,
        * exclude (day, job_id, metric_version, sg, rg, pg, mpg),
        mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        ).pg_coverage as pg_coverage,
        sg,
        rg,
        pg,
        mpg,
        mpg_main_loss(
            scheduling_chip_s, runtime_idle_chip_s, data_wait_chip_s, init_chip_s, compile_chip_s,
            checkpoint_restore_chip_s, checkpoint_save_chip_s, lost_progress_chip_s,
            productive_unprofiled_chip_s, program_loss_chip_s
        ) as main_loss,
        null::bigint as rank,
        null::bigint as jobs_ranked
    from job_days
),

lifetime as (
    select
        null::date as day,
        jobs.*
    from (
        select *, count(*) over () as jobs_ranked
        from mpg_jobs($metric_version, null, null)
    ) as jobs
    where jobs.job_id = $job_id
),

final as (
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
        profiled_chip_s,
        pg_coverage,
        sg,
        rg,
        pg,
        mpg,
        mpg_ratio(wanted_chip_s, wanted_chip_s) as wanted_share,
        mpg_ratio(all_allocated_chip_s, wanted_chip_s) as all_allocated_share,
        mpg_ratio(productive_chip_s, wanted_chip_s) as productive_share,
        mpg_ratio(coalesce(ideal_chip_s, 0), wanted_chip_s) as ideal_share,
        lost_chip_s,
        lost_scheduling_chip_s,
        lost_runtime_chip_s,
        lost_program_chip_s,
        lost_unprofiled_chip_s,
        main_loss,
        usd_per_chip_hour,
        unpriced_chip_s,
        wanted_usd,
        lost_usd,
        lost_scheduling_usd,
        lost_runtime_usd,
        lost_program_usd,
        lost_unprofiled_usd,
        rank,
        jobs_ranked
    from (
        select * from day_rows
        union all by name
        select * from lifetime
    )
)

select * from final
order by day nulls last
