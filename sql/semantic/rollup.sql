-- mpg_rollup: every roll-up of the job-day facts (mpg_job_days) an analyst can see: the fleet,
-- each slice column and every combination of them, each team, queue and owner, and each job, over
-- a period or per day.
-- grain: one row per (day, when p_by_day; else the whole period), metric version, and
--   combination of size_class, workload_class, framework, chip_generation (a CUBE: a NULL
--   slice column means "all"); plus one row per value of team, of queue and of owner (each a
--   one-column slice, not crossed with the others: slice_kind 'team', 'queue', 'owner'); plus
--   one row per job (slice_kind 'job', job_id set, with its team, queue and owner).
-- parameters: p_version (VARCHAR, NULL: every version, each apart); p_first, p_last (DATE, NULL:
--   an open end), inclusive; p_by_day (BOOLEAN): a row per day, or one for the period (day NULL).
-- columns: day, metric_version, slice_kind ('fleet', 'job', 'team', 'queue', 'owner', or the
--   slice columns grouped by, joined by '+': 'chip_generation',
--   'workload_class+framework+chip_generation', ...), slice (the value of a one-column slice,
--   the job's id, or 'fleet'; NULL for a team, queue or owner the input named none, a slice of
--   its own, told from "all" by slice_kind), the slice columns, team, queue, owner and job_id
--   (NULL: all, or none named), chips_requested and days (a job's: its days with job-days),
--   jobs, job_days, first_day, last_day, the sum of every measure of mpg_job_days, then pg_coverage, sg, rg, pg, mpg
--   (mpg_goodput_ratios), lost_share, ideal_share and unpriced_share (of wanted chip-time; ideal
--   / wanted is where the ledger ends, MPG x pg_coverage), usd_per_chip_hour (dollars wanted
--   over priced chip-hours), main_loss (mpg_main_loss).
-- Each grouping set partitions the same job-days, so every slice kind's rows add up to the
-- fleet's, day by day, to the cent (exact sums, mpg_sum): a team's, a queue's and an owner's
-- figures are chargeback's (docs/chargeback.md).
-- To slice by another column of job_day_goodput: add it as a grouping set of its own below (or
-- to the CUBE, to cross it with the others), to the job grouping set, and to slice_kind and
-- slice; the facts carry it already (mpg_job_days has every column of job_day_goodput), and the
-- scorecard takes every one-column slice. The GROUPING SETS are listed, not one CUBE of every
-- column: a CUBE of seven columns would be 128 groupings a day.
-- mpg_slice_rollup, which the scorecard reads, is this text with the CUBE cut to its empty set
-- and each of its columns alone (no crossed slices), made by mpg.sql.files when the macros are
-- created: keep one CUBE.
-- inputs: the macros mpg_job_days (sql/semantic/job_days.sql), mpg_job_day_sums (every measure
-- summed: sql/semantic/sums.sql), mpg_goodput_ratios, mpg_ratio and mpg_main_loss
-- (sql/publish/macros.sql).
create or replace temp macro mpg_rollup(p_version, p_first, p_last, p_by_day) as table
with facts as (
    select
        * exclude (day),
        day as job_day,
        case when p_by_day then day end as day,
        -- 1 on one row of each job in each group: a job's slice columns are the same on all its
        -- days, so summing this counts jobs (a cheaper count(distinct job_id))
        case
            when p_by_day then 1
            when row_number() over (partition by metric_version, job_id order by day) = 1 then 1
            else 0
        end as job_first_row
    from mpg_job_days(p_version, p_first, p_last)
),

sums as (
    select
        day,
        metric_version,
        case
            when grouping(job_id) = 0 then 'job'
            when grouping(team) = 0 then 'team'
            when grouping(queue) = 0 then 'queue'
            when grouping(owner) = 0 then 'owner'
            when grouping(size_class) + grouping(workload_class) + grouping(framework)
                + grouping(chip_generation) = 4 then 'fleet'
            else ltrim(
                case when grouping(size_class) = 0 then '+size_class' else '' end
                || case when grouping(workload_class) = 0 then '+workload_class' else '' end
                || case when grouping(framework) = 0 then '+framework' else '' end
                || case when grouping(chip_generation) = 0 then '+chip_generation' else '' end,
                '+'
            )
        end as slice_kind,
        -- the slice's value for a one-column slice, the job's id, 'fleet'; NULL for the others
        -- (and for a team, queue or owner that the input named none)
        case
            when grouping(job_id) = 0 then job_id
            when grouping(team) = 0 then team
            when grouping(queue) = 0 then queue
            when grouping(owner) = 0 then owner
            when grouping(size_class) + grouping(workload_class) + grouping(framework)
                + grouping(chip_generation) = 4 then 'fleet'
            when grouping(size_class) + grouping(workload_class) + grouping(framework)
                + grouping(chip_generation) = 3
                then coalesce(
                    case when grouping(size_class) = 0 then size_class end,
                    case when grouping(workload_class) = 0 then workload_class end,
                    case when grouping(framework) = 0 then framework end,
                    case when grouping(chip_generation) = 0 then chip_generation end
                )
        end as slice,
        size_class,
        workload_class,
        framework,
        chip_generation,
        team,
        queue,
        owner,
        job_id,
        case when grouping(job_id) = 0 then max(chips_requested) end as chips_requested,
        sum(job_first_row)::bigint as jobs,
        count(*) as job_days,
        case when grouping(job_id) = 0 then count(*) end as days,
        min(job_day) as first_day,
        max(job_day) as last_day,
        unnest(mpg_job_day_sums(facts))
    from facts
    group by
        day,
        metric_version,
        grouping sets (
            cube (size_class, workload_class, framework, chip_generation),
            (team),
            (queue),
            (owner),
            (job_id, size_class, workload_class, framework, chip_generation, team, queue, owner)
        )
),

final as (
    select
        *,
        unnest(mpg_goodput_ratios(
            wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s, profiled_chip_s
        )),
        mpg_ratio(lost_chip_s, wanted_chip_s) as lost_share,
        mpg_ratio(coalesce(ideal_chip_s, 0), wanted_chip_s) as ideal_share,
        mpg_ratio(unpriced_chip_s, wanted_chip_s) as unpriced_share,
        mpg_ratio(wanted_usd * 3600, priced_chip_s) as usd_per_chip_hour,
        mpg_main_loss(
            scheduling_chip_s, runtime_idle_chip_s, data_wait_chip_s, init_chip_s, compile_chip_s,
            checkpoint_restore_chip_s, checkpoint_save_chip_s, lost_progress_chip_s,
            productive_unprofiled_chip_s, program_loss_chip_s
        ) as main_loss
    from sums
)

select * from final
