-- Goodput over time for the report: the fleet, and each value of one slice column at a time.
-- grain: one row per day and slice, where a slice is the fleet (slice_kind 'fleet') or one value of
-- one of chip_generation, workload_class, framework (the other two "all").
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: the macro mpg_rollup (sql/semantic/rollup.sql), per day.
with period as (
    select *
    from mpg_rollup($metric_version, $first, $last, true)
    where slice_kind in ('fleet', 'chip_generation', 'workload_class', 'framework')
),

final as (
    select
        day,
        slice_kind,
        coalesce(chip_generation, workload_class, framework, 'fleet') as slice,
        wanted_chip_s,
        sg,
        rg,
        pg,
        pg_coverage,
        mpg,
        kwh,
        unpowered_chip_s
    from period
)

select * from final
order by slice_kind, slice, day
