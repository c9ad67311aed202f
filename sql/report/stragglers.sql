-- Stragglers by rank: for the job-days whose steps several ranks reported, how often each rank
-- was the slowest of a step.
-- grain: one row per job-day and rank, for the $limit job-days with the most several-rank steps
-- in the report's period (ties: job, then day).
-- parameters: $first, $last (DATE or NULL for an open end): the report's period, inclusive;
--   $limit (INTEGER).
-- input: table step_rank_stragglers.
with ranks as (
    select *
    from step_rank_stragglers
    where ($first is null or day >= $first) and ($last is null or day <= $last)
),

job_days as (
    select day, job_id, max(steps) as ranked_steps
    from ranks
    group by day, job_id
),

top as (
    select
        *,
        row_number() over (order by ranked_steps desc, job_id, day) as job_day_rank
    from job_days
),

final as (
    select
        top.job_day_rank,
        ranks.day,
        ranks.job_id,
        ranks.rank,
        ranks.steps,
        ranks.slowest_steps,
        ranks.slowest_share,
        ranks.mean_step_s
    from ranks
    inner join top using (day, job_id)
    where top.job_day_rank <= $limit
)

select * from final
order by job_day_rank, rank
