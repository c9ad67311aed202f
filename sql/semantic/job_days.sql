-- mpg_job_days: the semantic layer's facts, one row per job-day; every figure an analyst reads
-- is a sum of these columns, or a ratio of such sums (docs/metrics.md, "One number, one
-- definition").
-- grain: one row per job, day and metric version of job_day_goodput, in the period asked for.
-- parameters: p_version (VARCHAR, NULL: every version); p_first, p_last (DATE, NULL: an open end),
--   inclusive.
-- columns: every column of job_day_goodput (its slice columns included, so that a column added
--   there is a slice here), then
--   size_class (job_size_classes); profiled_chip_s (productive chip-time of a job-day with a PG);
--   <category>_chip_s for each ledger category but ideal (ideal_chip_s is job_day_goodput's);
--   lost_chip_s and its parts lost_scheduling_chip_s, lost_runtime_chip_s, lost_program_chip_s,
--   lost_unprofiled_chip_s; usd_per_chip_hour; priced_chip_s, unpriced_chip_s (the job-day's
--   wanted chip-time, with or without a price); wanted_usd, ideal_usd, <category>_usd, lost_usd
--   and its four parts in dollars; kwh, unpowered_chip_s.
--
-- THE DEFINITION OF LOST (chip-hours and dollars), here and nowhere else:
--   lost = every ledger category but `ideal` = wanted - ideal, in four parts:
--     scheduling  the `scheduling` category (wanted, not all allocated);
--     runtime     runtime_idle, lost_progress, checkpoint_save, checkpoint_restore, compile,
--                 init, data_wait (allocated, not productive);
--     program     `program_loss` (profiled productive time above the ideal);
--     unprofiled  `productive_unprofiled` (kept work whose program efficiency nobody measured).
--   Dollars lost are the dollars of those categories (chip_time_cost: chip-hours x the price of
--   the job's chip generation). A job-day whose generation has no price has no dollars at all
--   (NULL, never 0 or a guess): its wanted chip-time is unpriced_chip_s, named beside every total.
--   Additive over any set of job-days (days, jobs, slices, teams), so every total is a plain sum.
-- inputs: table job_day_goodput; view job_size_classes; the macros mpg_ledger (the ledger with
-- its costs: sql/semantic/ledger.sql), mpg_profiled and mpg_exact (sql/publish/macros.sql).
create or replace temp macro mpg_job_days(p_version, p_first, p_last) as table
with job_days as (
    select *
    from job_day_goodput
    where (p_version is null or metric_version = p_version)
        and (p_first is null or day >= p_first) and (p_last is null or day <= p_last)
),

size_classes as (
    select * from job_size_classes
),

ledger as (
    select
        day,
        job_id,
        metric_version,
        category,
        -- exact sums (mpg_exact: the same bits in any order), back to DOUBLE in `final`
        mpg_exact(chip_s) as chip_s,
        mpg_exact(usd) as usd,
        usd_per_chip_hour,
        mpg_exact(kwh) as kwh,
        case category
            when 'ideal' then null
            when 'scheduling' then 'scheduling'
            when 'program_loss' then 'program'
            when 'productive_unprofiled' then 'unprofiled'
            else 'runtime'
        end as loss_part
    from mpg_ledger(p_version, p_first, p_last)
),

per_job_day as (
    select
        day,
        job_id,
        metric_version,
        -- one generation per job-day, so one price: a job-day is priced, whole, or not at all
        count(usd) > 0 as priced,
        count(kwh) > 0 as powered,
        any_value(usd_per_chip_hour) as usd_per_chip_hour,
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
        coalesce(sum(chip_s) filter (where category = 'program_loss'), 0) as program_loss_chip_s,
        coalesce(sum(chip_s) filter (where category = 'productive_unprofiled'), 0)
            as productive_unprofiled_chip_s,
        coalesce(sum(chip_s) filter (where loss_part is not null), 0) as lost_chip_s,
        coalesce(sum(chip_s) filter (where loss_part = 'scheduling'), 0) as lost_scheduling_chip_s,
        coalesce(sum(chip_s) filter (where loss_part = 'runtime'), 0) as lost_runtime_chip_s,
        coalesce(sum(chip_s) filter (where loss_part = 'program'), 0) as lost_program_chip_s,
        coalesce(sum(chip_s) filter (where loss_part = 'unprofiled'), 0) as lost_unprofiled_chip_s,
        sum(usd) as wanted_usd,
        coalesce(sum(usd) filter (where category = 'ideal'), 0) as ideal_usd,
        coalesce(sum(usd) filter (where category = 'scheduling'), 0) as scheduling_usd,
        coalesce(sum(usd) filter (where category = 'runtime_idle'), 0) as runtime_idle_usd,
        coalesce(sum(usd) filter (where category = 'lost_progress'), 0) as lost_progress_usd,
        coalesce(sum(usd) filter (where category = 'checkpoint_save'), 0) as checkpoint_save_usd,
        coalesce(sum(usd) filter (where category = 'checkpoint_restore'), 0)
            as checkpoint_restore_usd,
        coalesce(sum(usd) filter (where category = 'compile'), 0) as compile_usd,
        coalesce(sum(usd) filter (where category = 'init'), 0) as init_usd,
        coalesce(sum(usd) filter (where category = 'data_wait'), 0) as data_wait_usd,
        coalesce(sum(usd) filter (where category = 'program_loss'), 0) as program_loss_usd,
        coalesce(sum(usd) filter (where category = 'productive_unprofiled'), 0)
            as productive_unprofiled_usd,
        coalesce(sum(usd) filter (where loss_part is not null), 0) as lost_usd,
        coalesce(sum(usd) filter (where loss_part = 'scheduling'), 0) as lost_scheduling_usd,
        coalesce(sum(usd) filter (where loss_part = 'runtime'), 0) as lost_runtime_usd,
        coalesce(sum(usd) filter (where loss_part = 'program'), 0) as lost_program_usd,
        coalesce(sum(usd) filter (where loss_part = 'unprofiled'), 0) as lost_unprofiled_usd,
        sum(kwh) as kwh
    from ledger
    group by day, job_id, metric_version
),

final as (
    select
        job_days.*,
        size_classes.size_class,
        mpg_profiled(job_days.productive_chip_s, job_days.pg) as profiled_chip_s,
        cast(coalesce(costs.scheduling_chip_s, 0) as double) as scheduling_chip_s,
        cast(coalesce(costs.runtime_idle_chip_s, 0) as double) as runtime_idle_chip_s,
        cast(coalesce(costs.lost_progress_chip_s, 0) as double) as lost_progress_chip_s,
        cast(coalesce(costs.checkpoint_save_chip_s, 0) as double) as checkpoint_save_chip_s,
        cast(coalesce(costs.checkpoint_restore_chip_s, 0) as double) as checkpoint_restore_chip_s,
        cast(coalesce(costs.compile_chip_s, 0) as double) as compile_chip_s,
        cast(coalesce(costs.init_chip_s, 0) as double) as init_chip_s,
        cast(coalesce(costs.data_wait_chip_s, 0) as double) as data_wait_chip_s,
        cast(coalesce(costs.program_loss_chip_s, 0) as double) as program_loss_chip_s,
        cast(coalesce(costs.productive_unprofiled_chip_s, 0) as double) as productive_unprofiled_chip_s,
        cast(coalesce(costs.lost_chip_s, 0) as double) as lost_chip_s,
        cast(coalesce(costs.lost_scheduling_chip_s, 0) as double) as lost_scheduling_chip_s,
        cast(coalesce(costs.lost_runtime_chip_s, 0) as double) as lost_runtime_chip_s,
        cast(coalesce(costs.lost_program_chip_s, 0) as double) as lost_program_chip_s,
        cast(coalesce(costs.lost_unprofiled_chip_s, 0) as double) as lost_unprofiled_chip_s,
        cast(case when costs.priced then costs.usd_per_chip_hour end as double) as usd_per_chip_hour,
        case when costs.priced then job_days.wanted_chip_s else 0 end as priced_chip_s,
        case when costs.priced then 0 else job_days.wanted_chip_s end as unpriced_chip_s,
        -- dollars only for a priced job-day: NULL, not 0, where its generation has no price
        cast(case when costs.priced then costs.wanted_usd end as double) as wanted_usd,
        cast(case when costs.priced then costs.ideal_usd end as double) as ideal_usd,
        cast(case when costs.priced then costs.scheduling_usd end as double) as scheduling_usd,
        cast(case when costs.priced then costs.runtime_idle_usd end as double) as runtime_idle_usd,
        cast(case when costs.priced then costs.lost_progress_usd end as double) as lost_progress_usd,
        cast(case when costs.priced then costs.checkpoint_save_usd end as double) as checkpoint_save_usd,
        cast(case when costs.priced then costs.checkpoint_restore_usd end as double) as checkpoint_restore_usd,
        cast(case when costs.priced then costs.compile_usd end as double) as compile_usd,
        cast(case when costs.priced then costs.init_usd end as double) as init_usd,
        cast(case when costs.priced then costs.data_wait_usd end as double) as data_wait_usd,
        cast(case when costs.priced then costs.program_loss_usd end as double) as program_loss_usd,
        cast(case when costs.priced then costs.productive_unprofiled_usd end as double)
            as productive_unprofiled_usd,
        cast(case when costs.priced then costs.lost_usd end as double) as lost_usd,
        cast(case when costs.priced then costs.lost_scheduling_usd end as double) as lost_scheduling_usd,
        cast(case when costs.priced then costs.lost_runtime_usd end as double) as lost_runtime_usd,
        cast(case when costs.priced then costs.lost_program_usd end as double) as lost_program_usd,
        cast(case when costs.priced then costs.lost_unprofiled_usd end as double) as lost_unprofiled_usd,
        cast(case when costs.powered then costs.kwh end as double) as kwh,
        case when costs.powered then 0 else job_days.wanted_chip_s end as unpowered_chip_s
    from job_days
    inner join size_classes
        on job_days.chips_requested >= size_classes.min_chips
        and (size_classes.max_chips is null or job_days.chips_requested <= size_classes.max_chips)
    left join per_job_day as costs using (day, job_id, metric_version)
)

select * from final
