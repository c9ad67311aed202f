-- mpg_chargeback: who pays for what (a team: a Slurm account, a Kubernetes namespace, a Philly
-- virtual cluster), per month or over a period: the chip-time and dollars each team wanted and
-- used, and the dollars it lost and to what, by queue and by owner within the team.
-- grain: one row per month (or the whole period), metric version and level:
--   'fleet'       every job-day (team, queue and owner NULL: all);
--   'team'        one row per team;
--   'team+queue'  one per team and queue it waited in;
--   'team+owner'  one per team and owner (the user who submitted).
--   A NULL team, queue or owner below 'fleet' is one the input named none: a value of its own.
--   Each level partitions the same job-days, so its rows add up to the fleet row of their month,
--   to the cent (exact sums, mpg_sum): docs/chargeback.md.
-- parameters: p_version (VARCHAR); p_first, p_last (DATE, NULL: an open end), inclusive;
--   p_by_month (BOOLEAN): a row per calendar month (UTC days), or one for the period (month NULL).
-- columns: month (the month's first day), metric_version, level, team, queue, owner, rank (worst
--   first within its month and level: dollars lost, most first, the unpriced after the priced
--   ones, then chip-hours lost, as mpg_jobs ranks jobs), first_day, last_day and days (the days
--   with job-days: a month still under way has fewer), jobs, job_days;
--   wanted_chip_s (the chip-time the jobs wanted), used_chip_s (the chip-time they held every
--   chip of: all-allocated, what a team is charged for), productive_chip_s, ideal_chip_s,
--   lost_chip_s and its four parts (scheduling, runtime, program, unprofiled);
--   priced_chip_s, unpriced_chip_s (wanted chip-time with or without a price);
--   wanted_usd, used_usd (the dollars of the chip-time held: wanted less scheduling, row by
--   row), lost_usd (THE dollars lost, sql/semantic/job_days.sql) and its parts
--   lost_scheduling_usd (of which nothing was held: the price of waiting), lost_runtime_usd,
--   lost_program_usd, lost_unprofiled_usd; kwh, unpowered_chip_s; pg_coverage, sg, rg, pg, mpg
--   (mpg_goodput_ratios); main_loss (mpg_main_loss).
--   Dollars are NULL where nothing in the row is priced, never 0 or a guess.
-- inputs: the macros mpg_job_days (sql/semantic/job_days.sql), mpg_job_day_sums (every measure
-- summed, as mpg_rollup sums them: sql/semantic/sums.sql), mpg_sum, mpg_goodput_ratios,
-- mpg_main_loss (sql/publish/macros.sql).
create or replace temp macro mpg_chargeback(p_version, p_first, p_last, p_by_month) as table
with facts as (
    select
        *,
        case when p_by_month then make_date(year(day), month(day), 1) end as month,
        -- what was held, in dollars: every category but scheduling (NULL where unpriced)
        wanted_usd - scheduling_usd as used_usd
    from mpg_job_days(p_version, p_first, p_last)
),

sums as (
    select
        month,
        metric_version,
        case
            when grouping(team) = 1 then 'fleet'
            when grouping(queue) = 0 then 'team+queue'
            when grouping(owner) = 0 then 'team+owner'
            else 'team'
        end as level,
        team,
        queue,
        owner,
        min(day) as first_day,
        max(day) as last_day,
        count(distinct day) as days,
        count(distinct job_id) as jobs,
        count(*) as job_days,
        unnest(mpg_job_day_sums(facts)),
        mpg_sum(used_usd) as used_usd
    from facts
    group by month, metric_version, grouping sets ((), (team), (team, queue), (team, owner))
),

final as (
    select
        month,
        metric_version,
        level,
        team,
        queue,
        owner,
        row_number() over (
            partition by month, metric_version, level
            order by lost_usd desc nulls last, lost_chip_s desc, team, queue, owner
        ) as rank,
        first_day,
        last_day,
        days,
        jobs,
        job_days,
        wanted_chip_s,
        all_allocated_chip_s as used_chip_s,
        productive_chip_s,
        ideal_chip_s,
        lost_chip_s,
        lost_scheduling_chip_s,
        lost_runtime_chip_s,
        lost_program_chip_s,
        lost_unprofiled_chip_s,
        priced_chip_s,
        unpriced_chip_s,
        wanted_usd,
        used_usd,
        lost_usd,
        lost_scheduling_usd,
        lost_runtime_usd,
        lost_program_usd,
        lost_unprofiled_usd,
        kwh,
        unpowered_chip_s,
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        )),
        mpg_main_loss(
            scheduling_chip_s, runtime_idle_chip_s, data_wait_chip_s, init_chip_s, compile_chip_s,
            checkpoint_restore_chip_s, checkpoint_save_chip_s, lost_progress_chip_s,
            productive_unprofiled_chip_s, program_loss_chip_s
        ) as main_loss
    from sums
)

select * from final
