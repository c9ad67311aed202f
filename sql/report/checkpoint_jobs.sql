-- The training jobs whose checkpoint interval matters most: checkpoint advice ranked by the
-- chip-hours that checkpointing at the advised interval would save over the job's analysed life.
-- grain: one row per training job advised to change its interval (advice 'change') whose days
-- meet the report's period, the $limit with the largest saving (the others, told to keep their
-- interval or without enough interruptions to advise on, are counted in `jobs_in_period`, not
-- listed).
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
        count(*) filter (where advice = 'change') over () as jobs_advised,
        row_number() over (
            order by chip_hours_saved desc, job_id
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
        observed_interval_steps,
        advised_interval_steps,
        rg,
        rg_predicted,
        rg_advised,
        chip_hours_saved,
        jobs_in_period,
        jobs_advised
    from ranked
    where saving_rank <= $limit and advice = 'change'
)

select * from final
order by saving_rank
