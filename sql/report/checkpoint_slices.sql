-- Checkpoint advice per slice for the report: the fleet, and each value of one slice column at a
-- time (chip generation, workload class, framework), from the analysts' roll-up.
-- grain: one row per slice column and value, and one for the fleet (slice_kind 'fleet').
-- Over every published training job, whatever the report's period: the view rolls up the table.
-- input: view checkpoint_advice_by_slice (sql/views/checkpoint_advice_by_slice.sql).
with slices as (
    select * from checkpoint_advice_by_slice
),

one_column as (
    select
        case
            when workload_class is null and framework is null and chip_generation is null
                then 'fleet'
            when framework is null and chip_generation is null then 'workload_class'
            when workload_class is null and chip_generation is null then 'framework'
            when workload_class is null and framework is null then 'chip_generation'
        end as slice_kind,
        coalesce(workload_class, framework, chip_generation, 'all') as slice,
        *
    from slices
),

final as (
    select * exclude (workload_class, framework, chip_generation)
    from one_column
    where slice_kind is not null
)

select * from final
order by
    case slice_kind
        when 'fleet' then 0 when 'chip_generation' then 1 when 'workload_class' then 2 else 3
    end,
    chip_hours_saved desc,
    slice
