-- Why dollars lost changed between two periods: the change in the semantic layer's dollars lost
-- (every ledger category but ideal, priced chip-time: sql/semantic/job_days.sql) split exactly
-- into parts, per slice (workload_class, framework, chip_generation: one price each) and for
-- the fleet (docs/compare.md).
-- A slice's dollars lost are D = U x (s + r + p + u): U its dollars wanted, s, r, p, u the
-- shares of U lost to scheduling, runtime, program and unprofiled time. With d the change from
-- the base period to the current one and m the mean of the two periods,
--   dD = dU x m(rate) + m(U) x (ds + dr + dp + du)      (exact for a product of two)
-- and dU x m(rate) splits into volume (dU at the fleet's mean rate of loss) and mix (dU at the
-- slice's mean rate less the fleet's: more dollars wanted where more, or less, of them are lost):
--   volume = dU x F,   mix = dU x (m(rate) - F),   scheduling = m(U) x ds, runtime = m(U) x dr,
--   program = m(U) x dp,   unprofiled = m(U) x du
-- with F the fleet's mean rate (its dollars lost over dollars wanted, the two periods' mean). A
-- slice with no job-days in a period takes its shares from the other (its change is then volume
-- and mix: it came or went). A slice whose generation has no price is in no dollar figure; a
-- price of 0 costs and loses nothing.
-- grain: one row per priced slice with job-days in either period, and one for the fleet
--   (slice_kind 'fleet': the slices' parts summed, and the fleet's own dollars wanted and lost
--   in each period with the parts of what it lost, base_lost_scheduling_usd ..., and its
--   unpriced chip-seconds); no slice row where a period has no priced chip-time with dollars
--   wanted (F is then unknown: `available` is false on the fleet row).
-- parameters: $metric_version (VARCHAR); $base_first, $base_last, $current_first,
--   $current_last (DATE, inclusive).
-- input: the macros mpg_rollup (sql/semantic/rollup.sql), mpg_ratio, mpg_sum.
with base as (
    select *
    from mpg_rollup($metric_version, $base_first, $base_last, false)
    where slice_kind in ('fleet', 'workload_class+framework+chip_generation')
),

now as (
    select *
    from mpg_rollup($metric_version, $current_first, $current_last, false)
    where slice_kind in ('fleet', 'workload_class+framework+chip_generation')
),

fleet as (
    select
        base.wanted_usd as base_wanted_usd,
        now.wanted_usd as current_wanted_usd,
        base.lost_usd as base_lost_usd,
        now.lost_usd as current_lost_usd,
        base.unpriced_chip_s as base_unpriced_chip_s,
        now.unpriced_chip_s as current_unpriced_chip_s,
        base.lost_scheduling_usd as base_lost_scheduling_usd,
        now.lost_scheduling_usd as current_lost_scheduling_usd,
        base.lost_runtime_usd as base_lost_runtime_usd,
        now.lost_runtime_usd as current_lost_runtime_usd,
        base.lost_program_usd as base_lost_program_usd,
        now.lost_program_usd as current_lost_program_usd,
        base.lost_unprofiled_usd as base_lost_unprofiled_usd,
        now.lost_unprofiled_usd as current_lost_unprofiled_usd,
        (mpg_ratio(base.lost_usd, base.wanted_usd) + mpg_ratio(now.lost_usd, now.wanted_usd))
            / 2 as fleet_rate
    from base, now
    where base.slice_kind = 'fleet' and now.slice_kind = 'fleet'
),

shares as (
    select
        period,
        workload_class,
        framework,
        chip_generation,
        wanted_usd,
        mpg_ratio(lost_scheduling_usd, wanted_usd) as scheduling,
        mpg_ratio(lost_runtime_usd, wanted_usd) as runtime,
        mpg_ratio(lost_program_usd, wanted_usd) as program,
        mpg_ratio(lost_unprofiled_usd, wanted_usd) as unprofiled
    from (
        select 'base' as period, * from base
        union all by name
        select 'current' as period, * from now
    )
    where slice_kind <> 'fleet' and wanted_usd is not null
),

paired as (
    select
        coalesce(b.workload_class, c.workload_class) as workload_class,
        coalesce(b.framework, c.framework) as framework,
        coalesce(b.chip_generation, c.chip_generation) as chip_generation,
        coalesce(b.wanted_usd, 0) as u0,
        coalesce(c.wanted_usd, 0) as u1,
        -- a slice absent from a period (or priced at 0 there) takes the other period's shares
        coalesce(b.scheduling, c.scheduling, 0) as s0,
        coalesce(c.scheduling, b.scheduling, 0) as s1,
        coalesce(b.runtime, c.runtime, 0) as r0,
        coalesce(c.runtime, b.runtime, 0) as r1,
        coalesce(b.program, c.program, 0) as p0,
        coalesce(c.program, b.program, 0) as p1,
        coalesce(b.unprofiled, c.unprofiled, 0) as n0,
        coalesce(c.unprofiled, b.unprofiled, 0) as n1
    from (select * from shares where period = 'base') as b
    full join (select * from shares where period = 'current') as c
        using (workload_class, framework, chip_generation)
),

parts as (
    select
        'workload_class+framework+chip_generation' as slice_kind,
        paired.workload_class,
        paired.framework,
        paired.chip_generation,
        (u1 - u0) * fleet.fleet_rate as volume,
        (u1 - u0) * ((s0 + r0 + p0 + n0 + s1 + r1 + p1 + n1) / 2 - fleet.fleet_rate) as mix,
        (u0 + u1) / 2 * (s1 - s0) as scheduling,
        (u0 + u1) / 2 * (r1 - r0) as runtime,
        (u0 + u1) / 2 * (p1 - p0) as program,
        (u0 + u1) / 2 * (n1 - n0) as unprofiled
    from paired
    cross join fleet
    where fleet.fleet_rate is not null
),

totals as (
    select
        'fleet' as slice_kind,
        null as workload_class,
        null as framework,
        null as chip_generation,
        coalesce(mpg_sum(volume), 0) as volume,
        coalesce(mpg_sum(mix), 0) as mix,
        coalesce(mpg_sum(scheduling), 0) as scheduling,
        coalesce(mpg_sum(runtime), 0) as runtime,
        coalesce(mpg_sum(program), 0) as program,
        coalesce(mpg_sum(unprofiled), 0) as unprofiled
    from parts
),

final as (
    select
        rows.*,
        rows.volume + rows.mix + rows.scheduling + rows.runtime + rows.program
            + rows.unprofiled as total,
        fleet.fleet_rate is not null as available,
        -- the fleet's own figures in each period, on its row only
        case when rows.slice_kind = 'fleet' then columns(fleet.* exclude (fleet_rate)) end
    from (select * from parts union all by name select * from totals) as rows
    cross join fleet
)

select * from final
order by slice_kind = 'fleet' desc, abs(total) desc, workload_class, framework, chip_generation
