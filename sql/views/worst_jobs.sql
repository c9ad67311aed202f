-- worst_jobs: jobs ranked by lost chip-time over their lifetime, with where it went, current
-- metric version.
-- grain: one row per job.
-- lost_chip_s = wanted - productive: the chip-time the job held or waited for that made no kept
-- progress (scheduling, runtime_idle, lost_progress, checkpoint_save, checkpoint_restore,
-- compile, init, data_wait), one column each. program_loss (productive time slower than the
-- ideal) is beside it, not in it: it is only known for profiled job-days (docs/views.md).
-- rank: 1 for the most lost chip-time; ties go to the job id's order.
-- Dollars (chip_time_cost) at the job's price, usd_per_chip_hour: wanted_usd, lost_usd (the dollars
-- of lost_chip_s) and program_loss_usd; all NULL where its chip generation has no price.
-- input: views chip_time_ledger_current, chip_time_cost_current, job_lifetime.
create or replace view worst_jobs as
with ledger as (
    select * from chip_time_ledger_current
),

costs as (
    select * from chip_time_cost_current
),

jobs as (
    select * from job_lifetime
),

categories as (
    select
        job_id,
        metric_version,
        coalesce(sum(chip_s) filter (where category = 'scheduling'), 0) as scheduling_chip_s,
        coalesce(sum(chip_s) filter (where category = 'runtime_idle'), 0) as runtime_idle_chip_s,
        coalesce(sum(chip_s) filter (where category = 'lost_progress'), 0)
            as lost_progress_chip_s,
        coalesce(sum(chip_s) filter (where category = 'checkpoint_save'), 0)
            as checkpoint_save_chip_s,
        coalesce(sum(chip_s) filter (where category = 'checkpoint_restore'), 0)
            as checkpoint_restore_chip_s,
        coalesce(sum(chip_s) filter (where category = 'compile'), 0) as compile_chip_s,
        coalesce(sum(chip_s) filter (where category = 'init'), 0) as init_chip_s,
        coalesce(sum(chip_s) filter (where category = 'data_wait'), 0) as data_wait_chip_s,
        coalesce(sum(chip_s) filter (where category = 'program_loss'), 0) as program_loss_chip_s
    from ledger
    group by job_id, metric_version
),

job_costs as (
    select
        job_id,
        metric_version,
        any_value(usd_per_chip_hour) as usd_per_chip_hour,
        sum(usd) as wanted_usd,
        -- zero, not NULL, for a priced job that lost nothing
        case when count(usd) > 0 then coalesce(sum(usd) filter (where category in (
            'scheduling', 'runtime_idle', 'lost_progress', 'checkpoint_save',
            'checkpoint_restore', 'compile', 'init', 'data_wait'
        )), 0) end as lost_usd,
        case when count(usd) > 0 then
            coalesce(sum(usd) filter (where category = 'program_loss'), 0)
        end as program_loss_usd
    from costs
    group by job_id, metric_version
),

final as (
    select
        row_number() over (
            order by jobs.wanted_chip_s - jobs.productive_chip_s desc, jobs.job_id
        ) as rank,
        jobs.job_id,
        jobs.metric_version,
        jobs.workload_class,
        jobs.framework,
        jobs.chip_generation,
        jobs.chips_requested,
        jobs.size_class,
        jobs.wanted_chip_s,
        jobs.productive_chip_s,
        jobs.wanted_chip_s - jobs.productive_chip_s as lost_chip_s,
        mpg_ratio(jobs.wanted_chip_s - jobs.productive_chip_s, jobs.wanted_chip_s) as lost_share,
        categories.* exclude (job_id, metric_version),
        jobs.mpg,
        job_costs.usd_per_chip_hour,
        job_costs.wanted_usd,
        job_costs.lost_usd,
        job_costs.program_loss_usd
    from jobs
    inner join categories using (job_id, metric_version)
    left join job_costs using (job_id, metric_version)
)

select * from final
order by rank
