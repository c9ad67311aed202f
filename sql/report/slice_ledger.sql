-- Where each slice's chip-time went over the whole period: the chip-time ledger summed per value
-- of one slice column at a time (chip generation, workload class, framework), as goodput_by_slice
-- rolls them up. A slice's rows add up to its wanted chip-time.
-- grain: one row per slice column, slice value and ledger category (categories with no chip-time
-- left out).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: tables chip_time_ledger, job_day_goodput (for each job-day's slice columns).
with ledger as (
    select *
    from chip_time_ledger
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

job_days as (
    select day, job_id, metric_version, chip_generation, workload_class, framework
    from job_day_goodput
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

sliced as (
    select job_days.*, ledger.category, ledger.chip_s
    from ledger
    inner join job_days using (day, job_id, metric_version)
),

one_slice_column as (
    select 'chip_generation' as slice_kind, chip_generation as slice, category, chip_s from sliced
    union all
    select 'workload_class' as slice_kind, workload_class as slice, category, chip_s from sliced
    union all
    select 'framework' as slice_kind, framework as slice, category, chip_s from sliced
),

final as (
    select slice_kind, slice, category, sum(chip_s) / 3600 as chip_h
    from one_slice_column
    group by slice_kind, slice, category
    having sum(chip_s) > 0
)

select * from final
order by slice_kind, slice, category
