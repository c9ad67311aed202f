-- job_days_sized: the current metric version's job-days, each with its job size class.
-- grain: one row per job and day.
-- The building block of the views that slice by size class (job_size_classes says the bounds).
-- input: views job_day_goodput_current, job_size_classes.
create or replace view job_days_sized as
with job_days as (
    select * from job_day_goodput_current
),

classes as (
    select * from job_size_classes
),

final as (
    select
        job_days.*,
        classes.size_class
    from job_days
    inner join classes
        on job_days.chips_requested >= classes.min_chips
        and (classes.max_chips is null or job_days.chips_requested <= classes.max_chips)
)

select * from final
order by day, job_id
