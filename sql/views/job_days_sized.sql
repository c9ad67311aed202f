-- job_days_sized: the current metric version's job-days, each with its job size class and its
-- measures: job_day_facts under its earlier name (kept for queries written against it).
-- grain: one row per job and day.
-- input: view job_day_facts.
create or replace view job_days_sized as
with facts as (
    select * from job_day_facts
),

final as (
    select * from facts
)

select * from final
order by day, job_id
