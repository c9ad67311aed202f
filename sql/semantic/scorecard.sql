-- mpg_scorecard: the fleet and each slice (chip generation, workload class, framework, job size
-- class, team, queue, owner: every one-column slice of mpg_rollup) over a period, worst first, beside the previous
-- period of equal length.
-- grain: one row for the fleet (slice_kind 'fleet') and one per value of each slice column with
--   job-days in the period.
-- parameters: p_version (VARCHAR); p_first, p_last (DATE, both given), inclusive.
-- columns: slice_kind, kind_order (the order the kinds are shown in: fleet, chip generation,
--   workload class, framework, size class, team, queue, owner), slice (the value; 'fleet' for the fleet), rank (worst first within the
--   slice kind: dollars lost, most first, slices with no price after the priced ones, then
--   chip-hours lost, as mpg_jobs ranks jobs), the period's figures (mpg_rollup), main_loss; the
--   previous period (previous_first .. previous_last, the same number of days just before) as
--   previous_days (its days with job-days), previous_complete (every one of its days has
--   job-days: a partial period would compare unlike with like) and its figures (previous_*);
--   the changes (*_change: this period's less the previous one's), NULL unless the previous
--   period is complete.
-- inputs: the macro mpg_slice_rollup (mpg_rollup without the crossed slices' grouping sets,
-- derived from sql/semantic/rollup.sql by mpg.sql.files); table job_day_goodput (the days the
-- previous period has).
create or replace temp macro mpg_scorecard(p_version, p_first, p_last) as table
with bounds as (
    select
        p_first as period_first,
        p_last as period_last,
        date_diff('day', p_first, p_last) + 1 as period_days,
        cast(p_first - to_days(date_diff('day', p_first, p_last) + 1) as date) as previous_first,
        cast(p_first - to_days(1) as date) as previous_last
),

current_period as (
    select * from mpg_slice_rollup(p_version, p_first, p_last, false)
),

previous_period as (
    select *
    from mpg_slice_rollup(
        p_version, (select previous_first from bounds), (select previous_last from bounds), false
    )
),

previous_days as (
    select count(distinct day) as days
    from job_day_goodput
    where metric_version = p_version
        and day between (select previous_first from bounds) and (select previous_last from bounds)
),

-- the fleet and every one-column slice mpg_rollup has (a slice column added there is here too)
slices as (
    select *
    from current_period
    where slice_kind = 'fleet' or (slice_kind <> 'job' and slice_kind not like '%+%')
),

previous_slices as (
    select *
    from previous_period
    where slice_kind = 'fleet' or (slice_kind <> 'job' and slice_kind not like '%+%')
),

joined as (
    select
        slices.slice_kind,
        case slices.slice_kind
            when 'fleet' then 0 when 'chip_generation' then 1 when 'workload_class' then 2
            when 'framework' then 3 when 'size_class' then 4 when 'team' then 5
            when 'queue' then 6 when 'owner' then 7 else 8
        end as kind_order,
        slices.slice,
        row_number() over (
            partition by slices.slice_kind
            order by slices.lost_usd desc nulls last, slices.lost_chip_s desc, slices.slice
        ) as rank,
        bounds.period_first,
        bounds.period_last,
        bounds.period_days,
        slices.jobs,
        slices.wanted_chip_s,
        slices.productive_chip_s,
        slices.ideal_chip_s,
        slices.profiled_chip_s,
        slices.lost_chip_s,
        slices.lost_share,
        slices.priced_chip_s,
        slices.unpriced_chip_s,
        slices.wanted_usd,
        slices.lost_usd,
        slices.lost_scheduling_usd,
        slices.lost_runtime_usd,
        slices.lost_program_usd,
        slices.lost_unprofiled_usd,
        slices.pg_coverage,
        slices.sg,
        slices.rg,
        slices.pg,
        slices.mpg,
        slices.main_loss,
        bounds.previous_first,
        bounds.previous_last,
        previous_days.days as previous_days,
        previous_days.days = bounds.period_days as previous_complete,
        previous_slices.wanted_chip_s as previous_wanted_chip_s,
        previous_slices.lost_chip_s as previous_lost_chip_s,
        previous_slices.lost_usd as previous_lost_usd,
        previous_slices.pg_coverage as previous_pg_coverage,
        previous_slices.sg as previous_sg,
        previous_slices.rg as previous_rg,
        previous_slices.pg as previous_pg,
        previous_slices.mpg as previous_mpg
    from slices
    cross join bounds
    cross join previous_days
    left join previous_slices
        -- a NULL value (a team the input named none) is a slice of its own
        on slices.slice_kind = previous_slices.slice_kind
        and slices.slice is not distinct from previous_slices.slice
),

final as (
    select
        *,
        case when previous_complete then mpg - previous_mpg end as mpg_change,
        case when previous_complete then sg - previous_sg end as sg_change,
        case when previous_complete then rg - previous_rg end as rg_change,
        case when previous_complete then pg - previous_pg end as pg_change,
        case when previous_complete then pg_coverage - previous_pg_coverage end
            as pg_coverage_change,
        -- a slice the previous period did not have lost nothing then (but an unpriced one, $?)
        case when previous_complete then
            lost_usd - coalesce(previous_lost_usd, case when previous_wanted_chip_s is null then 0 end)
        end as lost_usd_change,
        case when previous_complete then lost_chip_s - coalesce(previous_lost_chip_s, 0) end
            as lost_chip_s_change
    from joined
)

select * from final
order by kind_order, rank
