-- fleet_mpg_by_day: the whole fleet's goodput per day, current metric version.
-- grain: one row per day.
-- The fleet row of goodput_by_slice (every slice column NULL: all of them), so its ratios are the
-- published ones: ratios of sums of chip-seconds.
-- input: view goodput_by_slice_current.
create or replace view fleet_mpg_by_day as
with slices as (
    select * from goodput_by_slice_current
),

final as (
    select
        day,
        metric_version,
        wanted_chip_s,
        all_allocated_chip_s,
        productive_chip_s,
        ideal_chip_s,
        pg_coverage,
        sg,
        rg,
        pg,
        mpg
    from slices
    where workload_class is null and framework is null and chip_generation is null
)

select * from final
order by day
