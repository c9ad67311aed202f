-- The headline a run prints: fleet goodput per day, then per chip generation.
-- grain: one row per day and metric version with chip_generation NULL (the whole fleet), and one
-- per day, metric version and chip generation.
-- input: table goodput_by_slice.
with fleet_and_generations as (
    select * from goodput_by_slice
    where workload_class is null and framework is null
),

final as (
    select day, metric_version, chip_generation, wanted_chip_s, sg, rg, pg, pg_coverage, mpg
    from fleet_and_generations
)

select * from final
order by metric_version, day, chip_generation nulls first
