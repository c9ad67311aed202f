-- One period's fleet and finest slices for `mpg compare`: the semantic layer's roll-up
-- (mpg_rollup) of the fleet and of each slice (workload_class, framework, chip_generation:
-- goodput_by_slice's finest cells), its chip-time sums and their ratios, the inputs of the
-- decomposition of the change in fleet MPG.
-- grain: one row for the fleet (slice_kind 'fleet') and one per slice with job-days in the period.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE, inclusive).
-- input: the macro mpg_rollup (sql/semantic/rollup.sql).
with slices as (
    select *
    from mpg_rollup($metric_version, $first, $last, false)
    where slice_kind in ('fleet', 'workload_class+framework+chip_generation')
),

final as (
    select
        slice_kind,
        workload_class,
        framework,
        chip_generation,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        coalesce(ideal_chip_s, 0) as ideal_chip_s,
        profiled_chip_s,
        sg,
        rg,
        pg,
        pg_coverage,
        mpg
    from slices
)

select * from final
order by slice_kind, workload_class, framework, chip_generation
