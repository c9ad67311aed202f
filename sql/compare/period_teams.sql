-- One period's fleet and teams for `mpg compare`'s "which teams moved the fleet": the semantic
-- layer's roll-up (mpg_rollup) of the fleet and of each team (a one-column slice: teams
-- partition the fleet, as the finest slices do), its chip-time sums and their ratios, the
-- inputs of the same decomposition of the change in fleet MPG, and its dollars lost.
-- grain: one row for the fleet (slice_kind 'fleet') and one per team with job-days in the
--   period (team NULL: the input named none, a team of its own).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE, inclusive).
-- input: the macro mpg_rollup (sql/semantic/rollup.sql).
with slices as (
    select *
    from mpg_rollup($metric_version, $first, $last, false)
    where slice_kind in ('fleet', 'team')
),

final as (
    select
        slice_kind,
        team,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        coalesce(ideal_chip_s, 0) as ideal_chip_s,
        profiled_chip_s,
        sg,
        rg,
        pg,
        pg_coverage,
        mpg,
        lost_chip_s,
        lost_usd
    from slices
)

select * from final
order by slice_kind, team nulls first
