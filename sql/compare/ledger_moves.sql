-- The ledger categories that moved between two periods, for the fleet and each slice
-- (workload_class, framework, chip_generation): each category's share of the slice's wanted
-- chip-time in each period (0 in a period where the slice has no job-days), its dollars
-- (priced chip-time; 0 where the slice has none in a period), and their changes.
-- grain: one row per slice (the fleet: slice_kind 'fleet') and ledger category with chip-time in
--   either period.
-- share_rank: the category's rank within its slice by the largest change in share, leaving out
--   categories whose share did not move (NULL); usd_rank: the same by the change in dollars.
-- parameters: $metric_version (VARCHAR); $base_first, $base_last, $current_first,
--   $current_last (DATE, inclusive).
-- input: the macros mpg_rollup (sql/semantic/rollup.sql), mpg_ratio.
with rollups as (
    select 'base' as period, *
    from mpg_rollup($metric_version, $base_first, $base_last, false)
    where slice_kind in ('fleet', 'workload_class+framework+chip_generation')
    union all by name
    select 'current' as period, *
    from mpg_rollup($metric_version, $current_first, $current_last, false)
    where slice_kind in ('fleet', 'workload_class+framework+chip_generation')
),

categories as (
    select
        period,
        slice_kind,
        workload_class,
        framework,
        chip_generation,
        wanted_chip_s,
        unnest([
            {'category': 'ideal', 'chip_s': coalesce(ideal_chip_s, 0), 'usd': ideal_usd},
            {'category': 'program_loss', 'chip_s': program_loss_chip_s,
             'usd': program_loss_usd},
            {'category': 'productive_unprofiled', 'chip_s': productive_unprofiled_chip_s,
             'usd': productive_unprofiled_usd},
            {'category': 'lost_progress', 'chip_s': lost_progress_chip_s,
             'usd': lost_progress_usd},
            {'category': 'checkpoint_save', 'chip_s': checkpoint_save_chip_s,
             'usd': checkpoint_save_usd},
            {'category': 'checkpoint_restore', 'chip_s': checkpoint_restore_chip_s,
             'usd': checkpoint_restore_usd},
            {'category': 'compile', 'chip_s': compile_chip_s, 'usd': compile_usd},
            {'category': 'init', 'chip_s': init_chip_s, 'usd': init_usd},
            {'category': 'data_wait', 'chip_s': data_wait_chip_s, 'usd': data_wait_usd},
            {'category': 'runtime_idle', 'chip_s': runtime_idle_chip_s,
             'usd': runtime_idle_usd},
            {'category': 'scheduling', 'chip_s': scheduling_chip_s, 'usd': scheduling_usd}
        ], recursive := true)
    from rollups
),

shares as (
    select
        *,
        mpg_ratio(chip_s, wanted_chip_s) as share
    from categories
),

paired as (
    select
        coalesce(base.slice_kind, now.slice_kind) as slice_kind,
        coalesce(base.workload_class, now.workload_class) as workload_class,
        coalesce(base.framework, now.framework) as framework,
        coalesce(base.chip_generation, now.chip_generation) as chip_generation,
        coalesce(base.category, now.category) as category,
        coalesce(base.chip_s, 0) as base_chip_s,
        coalesce(now.chip_s, 0) as current_chip_s,
        coalesce(base.share, 0) as base_share,
        coalesce(now.share, 0) as current_share,
        coalesce(base.usd, 0) as base_usd,
        coalesce(now.usd, 0) as current_usd
    from (select * from shares where period = 'base') as base
    full join (select * from shares where period = 'current') as now
        on base.slice_kind = now.slice_kind
        and base.workload_class is not distinct from now.workload_class
        and base.framework is not distinct from now.framework
        and base.chip_generation is not distinct from now.chip_generation
        and base.category = now.category
),

changes as (
    select
        *,
        current_share - base_share as change,
        current_usd - base_usd as usd_change
    from paired
    where base_chip_s <> 0 or current_chip_s <> 0
),

final as (
    select
        *,
        case when change <> 0 then row_number() over (
            partition by slice_kind, workload_class, framework, chip_generation, change = 0
            order by abs(change) desc, category
        ) end as share_rank,
        case when usd_change <> 0 then row_number() over (
            partition by slice_kind, workload_class, framework, chip_generation, usd_change = 0
            order by abs(usd_change) desc, category
        ) end as usd_rank
    from changes
)

select * from final
order by slice_kind, workload_class, framework, chip_generation, category
