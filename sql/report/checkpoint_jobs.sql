-- The training jobs whose checkpoint interval matters most: checkpoint advice ranked by the
-- chip-hours a day that checkpointing at the Young/Daly interval would save.
-- grain: one row per training job with advice whose days meet the report's period, the $limit
-- with the largest saving (jobs without advice, no interruption or no blocking save, rank last
-- and are counted in `jobs_in_period`, not listed).
-- Advice is per job over all its published days (docs/metrics.md), not per day: a job that
-- overlaps the period is shown whole.
-- parameters: $first, $last (DATE or NULL for an open end): the report's period, inclusive;
--   $limit (INTEGER).
-- input: table checkpoint_advice.
with advice as (
    select *
    from checkpoint_advice
    where ($first is null or last_day >= $first) and ($last is null or first_day <= $last)
),

ranked as (
    select
        *,
        count(*) over () as jobs_in_period,
        count(advised_interval_s) over () as jobs_advised,
        row_number() over (
            order by chip_hours_saved_per_day desc nulls last, job_id
        ) as saving_rank
    from advice
),

final as (
    select
        saving_rank,
        job_id,
        workload_class,
        framework,
        chip_generation,
        chips_requested,
        first_day,
        last_day,
        interruptions,
        interruptions_per_hour,
        mtbi_s,
        mean_save_s,
        mean_restart_s,
        observed_interval_s,
        advised_interval_s,
        rg,
        rg_predicted,
        rg_advised,
        chip_hours_saved_per_day,
        usd_saved_per_day,
        jobs_in_period,
        jobs_advised
    from ranked
    where saving_rank <= $limit and advised_interval_s is not null
)

select * from final
order by saving_rank
