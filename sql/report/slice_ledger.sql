-- Where each slice's chip-time went over the whole period: the chip-time ledger summed per value
-- of one slice column at a time (chip generation, workload class, framework), as goodput_by_slice
-- rolls them up. A slice's rows add up to its wanted chip-time.
-- grain: one row per slice column, slice value and ledger category (categories with no chip-time
-- left out); slice_chip_h, slice_usd: the slice's totals (its wanted chip-hours, its priced
-- dollars), share: the category's part of the slice's wanted chip-hours.
-- usd, kwh: chip_time_cost's over the chip-time whose generation has a price (a board power), NULL
-- where none has; unpriced_chip_h: the chip-hours without a price.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: the macros mpg_ledger (sql/semantic/ledger.sql: the ledger with its costs and each
-- job-day's slice columns), mpg_sum, mpg_ratio.
with sliced as (
    select * from mpg_ledger($metric_version, $first, $last)
),

one_slice_column as (
    select 'chip_generation' as slice_kind, chip_generation as slice, * from sliced
    union all
    select 'workload_class' as slice_kind, workload_class as slice, * from sliced
    union all
    select 'framework' as slice_kind, framework as slice, * from sliced
),

categories as (
    select
        slice_kind,
        slice,
        category,
        mpg_sum(chip_s) / 3600 as chip_h,
        mpg_sum(usd) as usd,
        mpg_sum(kwh) as kwh,
        coalesce(mpg_sum(case when usd is null then chip_s end), 0) / 3600 as unpriced_chip_h
    from one_slice_column
    group by slice_kind, slice, category
    having sum(chip_s) > 0
),

final as (
    select
        *,
        sum(chip_h) over slice_rows as slice_chip_h,
        sum(usd) over slice_rows as slice_usd,
        mpg_ratio(chip_h, sum(chip_h) over slice_rows) as share
    from categories
    window slice_rows as (partition by slice_kind, slice)
)

select * from final
order by slice_kind, slice, category
