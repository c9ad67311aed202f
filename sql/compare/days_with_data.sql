-- The days of a metric version that have job-day rows, within a range, for `mpg compare` to
-- refuse a period with days the published tables do not cover.
-- grain: one row per day with at least one job-day row.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE, inclusive).
-- input: table job_day_goodput.
with job_days as (
    select day from job_day_goodput
    where metric_version = $metric_version and day between $first and $last
),

final as (
    select distinct day from job_days
)

select * from final
order by day
