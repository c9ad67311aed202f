-- The report's period: the first and last days, within the days asked for, that have published
-- job-day rows of the metric version (both NULL where none has).
-- grain: one row.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end), inclusive.
-- input: table job_day_goodput.
with job_days as (
    select day
    from job_day_goodput
    where metric_version = $metric_version
        and ($first is null or day >= $first) and ($last is null or day <= $last)
),

final as (
    select min(day) as first_day, max(day) as last_day from job_days
)

select * from final
