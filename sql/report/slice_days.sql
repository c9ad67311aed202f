-- Goodput over time for the report: the fleet, and each value of one slice column at a time.
-- grain: one row per day and slice, where a slice is the fleet (slice_kind 'fleet') or one value of
-- one of chip_generation, workload_class, framework (the other two "all").
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: table goodput_by_slice.
with period as (
    select *
    from goodput_by_slice
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

one_slice_column as (
    select
        *,
        case
            when chip_generation is null and workload_class is null and framework is null
                then 'fleet'
            when workload_class is null and framework is null then 'chip_generation'
            when chip_generation is null and framework is null then 'workload_class'
            when chip_generation is null and workload_class is null then 'framework'
        end as slice_kind
    from period
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
        mpg
    from one_slice_column
    where slice_kind is not null
)

select * from final
order by slice_kind, slice, day
