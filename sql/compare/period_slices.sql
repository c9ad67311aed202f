-- One period's fleet, finest slices and teams for `mpg compare`: the semantic layer's roll-up
-- (mpg_rollup) of the fleet, of each slice (workload_class, framework, chip_generation:
-- goodput_by_slice's finest cells) and of each team (a one-column slice: teams partition the
-- fleet as the finest slices do), its chip-time sums and their ratios, the inputs of the
-- decomposition of the change in fleet MPG (by slice, and by team), and dollars lost.
-- grain: one row for the fleet (slice_kind 'fleet'), one per slice and one per team (slice_kind
--   'team'; team NULL: the input named none, a team of its own) with job-days in the period.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE, inclusive).
-- input: the macro mpg_rollup (sql/semantic/rollup.sql).
with slices as (
    select *
    from mpg_rollup($metric_version, $first, $last, false)
    where slice_kind in ('fleet', 'workload_class+framework+chip_generation', 'team')
),

final as (
    select
        slice_kind,
        workload_class,
        framework,
        chip_generation,
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
order by slice_kind, workload_class, framework, chip_generation, team nulls first
