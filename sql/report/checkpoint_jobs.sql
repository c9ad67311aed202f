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
-- Beside each job: its saving in dollars (usd_saved, mpg_advice: NULL where its generation has no
-- price); over every advised job of the period, the chip-hours saved, their dollars (priced jobs),
-- the chip-hours saved by unpriced ones, and days_analysed (the calendar days from the jobs' first
-- day to their last) with chip_hours_saved_a_day, the saving per calendar day of them.
-- input: the macro mpg_advice (sql/semantic/advice.sql).
with advice as (
    select * from mpg_advice($first, $last)
),

ranked as (
    select
        *,
        count(*) over () as jobs_in_period,
        count(*) filter (where advice = 'change') over () as jobs_advised,
        -- what every advised job of the period would save (not only the $limit listed)
        sum(chip_hours_saved) over () as chip_hours_saved_in_period,
        sum(usd_saved) over () as usd_saved_in_period,
        coalesce(sum(chip_hours_saved) filter (where usd_saved is null) over (), 0)
            as unpriced_chip_hours_saved,
        date_diff('day', min(first_day) over (), max(last_day) over ()) + 1 as days_analysed,
        -- ranked among the jobs advised to change (those told to keep save nothing)
        row_number() over (
            partition by advice = 'change' order by chip_hours_saved desc, job_id
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
        usd_per_chip_hour,
        usd_saved,
        jobs_in_period,
        jobs_advised,
        chip_hours_saved_in_period,
        usd_saved_in_period,
        unpriced_chip_hours_saved,
        days_analysed,
        chip_hours_saved_in_period / days_analysed as chip_hours_saved_a_day
    from ranked
    where saving_rank <= $limit and advice = 'change'
)

select * from final
order by saving_rank
