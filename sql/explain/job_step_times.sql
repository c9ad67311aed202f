-- One job's published step-time statistics, per day (kept steps only).
-- grain: one row per day of the job with kept steps.
-- parameters: $job_id (VARCHAR).
-- input: table step_time_stats.
with stats as (
    select * from step_time_stats
    where job_id = $job_id
),

final as (
    select * from stats
)

select * from final
order by day
