-- job_day_facts: the semantic layer's facts, current metric version: each job-day with its
-- size class and every measure every roll-up sums (chip-time by ledger category, lost and its
-- parts, dollars, kWh, priced and unpriced chip-time), as mpg_job_days defines them
-- (sql/semantic/job_days.sql, where "lost" and "dollars lost" are defined).
-- grain: one row per job and day.
-- input: the macro mpg_job_days; view current_metric_version.
create or replace view job_day_facts as
with facts as (
    select * from mpg_job_days((select metric_version from current_metric_version), null, null)
),

final as (
    select * from facts
)

select * from final
order by day, job_id
