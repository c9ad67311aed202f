-- What the published tables cover, per metric version: the days and job-days they hold.
-- grain: one row per metric version.
-- input: table job_day_goodput.
with job_days as (
    select * from job_day_goodput
),

final as (
    select
        metric_version,
        min(day) as first_day,
        max(day) as last_day,
        count(distinct day) as days,
        count(*) as job_days,
        count(distinct job_id) as jobs
    from job_days
    group by metric_version
)

select * from final
order by metric_version
