-- How far the pipeline's job-day chip-time is from the independent cross-check query's.
-- grain: one row for the whole comparison.
-- parameters: $pipeline (VARCHAR[]: job_day_goodput's data files), $crosscheck (VARCHAR path of
-- the Parquet that sql/crosscheck/job_day_chip_time.sql produced).
with pipeline as (
    select day, job_id, wanted_chip_s, all_allocated_chip_s, productive_chip_s
    from read_parquet($pipeline)
    where metric_version = 'v1'
),

crosscheck as (
    select day, job_id, wanted_chip_s, all_allocated_chip_s, productive_chip_s
    from read_parquet($crosscheck)
),

paired as (
    select
        p.job_id is null or x.job_id is null as unmatched,
        greatest(
            abs(p.wanted_chip_s - x.wanted_chip_s) / greatest(abs(x.wanted_chip_s), 1e-9),
            abs(p.all_allocated_chip_s - x.all_allocated_chip_s)
                / greatest(abs(x.all_allocated_chip_s), 1e-9),
            abs(p.productive_chip_s - x.productive_chip_s)
                / greatest(abs(x.productive_chip_s), 1e-9)
        ) as relative_difference
    from pipeline as p
    full join crosscheck as x using (day, job_id)
),

final as (
    select
        count(*) as job_days,
        count(*) filter (where unmatched) as unmatched_job_days,
        coalesce(max(relative_difference), 0) as largest_relative_difference
    from paired
)

select * from final
