-- mpg_advice: each training job's checkpoint advice (checkpoint_advice: chip-time only) with
-- what its saving is worth: chip_hours_saved (over the job's analysed life, 0 unless it is
-- advised to change its interval) x the price of its chip generation (cost_rates), so that a
-- price changed in DIR/mpg.toml re-prices advice without recomputing it.
-- grain: one row per training job with advice whose days meet the period (advice is per job over
--   its whole life: a job that overlaps the period is there whole).
-- parameters: p_first, p_last (DATE, NULL: an open end), inclusive.
-- columns: every column of checkpoint_advice, then usd_per_chip_hour (NULL: its generation has
--   no price) and usd_saved (chip_hours_saved x usd_per_chip_hour: NULL where no price, never a
--   guess).
-- inputs: tables checkpoint_advice, cost_rates.
create or replace temp macro mpg_advice(p_first, p_last) as table
with advice as (
    select *
    from checkpoint_advice
    where (p_first is null or last_day >= p_first) and (p_last is null or first_day <= p_last)
),

final as (
    select
        advice.*,
        rates.usd_per_chip_hour,
        advice.chip_hours_saved * rates.usd_per_chip_hour as usd_saved
    from advice
    left join cost_rates as rates using (chip_generation)
)

select * from final
