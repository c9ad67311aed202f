-- The report's period in one row per slice: the fleet and each value of each slice column
-- (chip generation, workload class, framework, job size class), every figure of the semantic
-- layer (mpg_rollup): chip-time sums and ratios, lost and its parts in chip-hours and dollars,
-- priced and unpriced chip-time, kWh, the main loss; and wanted_share, the slice's part of the
-- fleet's wanted chip-time; mpg_wanted_chip_s, MPG x wanted (where the ledger would end were
-- every productive chip-hour profiled at the slice's PG).
-- grain: one row for the fleet (slice_kind 'fleet') and one per value of each slice column.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE): the report's period, inclusive.
-- input: the macros mpg_rollup (sql/semantic/rollup.sql), mpg_ratio.
with slices as (
    select *
    from mpg_rollup($metric_version, $first, $last, false)
    where slice_kind in ('fleet', 'chip_generation', 'workload_class', 'framework', 'size_class')
),

final as (
    select
        * exclude (day, job_id, chips_requested),
        mpg_ratio(
            wanted_chip_s, max(wanted_chip_s) filter (where slice_kind = 'fleet') over ()
        ) as wanted_share,
        mpg * wanted_chip_s as mpg_wanted_chip_s
    from slices
)

select * from final
order by slice_kind, slice
