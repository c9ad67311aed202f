-- checkpoint_advice_by_slice: the checkpoint advice rolled up per slice.
-- grain: one row per combination of workload_class, framework and chip_generation, a NULL slice
-- column meaning "all" (GROUP BY CUBE: every roll-up present).
-- Every mean is a ratio of sums over the slice's jobs (interruptions per all-allocated hour,
-- MTBI, save and restart cost, interval); the advised interval is Young/Daly's on the slice's own
-- means, sqrt(2 x mean save x MTBI), a summary and not advice (advice is per job); RGs are ratios
-- of summed chip-time, a job not advised to change counting as unchanged. The chip-hours saved
-- are the plain sum of the jobs' (each over its analysed life, 0 unless advised to change); per
-- calendar day, that sum over the days of the period analysed, the whole table's first day to
-- its last (the same for every slice, so slices add up per day as they do in total).
-- Over every published training job (advice is per job over its whole life, not per day; its
-- table has no metric version: none of it depends on PG).
-- input: table checkpoint_advice (mpg.schemas.CHECKPOINT_ADVICE, one row per training job); the
-- macros of sql/publish/macros.sql (mpg_ratio).
create or replace view checkpoint_advice_by_slice as
with advice as (
    select * from checkpoint_advice
),

period as (
    -- every slice row has a job, so the period has at least its one day
    select date_diff('day', min(first_day), max(last_day)) + 1 as days
    from advice
),

sums as (
    select
        workload_class,
        framework,
        chip_generation,
        count(*) as jobs,
        count(*) filter (where advice = 'change') as jobs_to_change,
        sum(all_allocated_s) as all_allocated_s,
        -- BIGINT, as the table: a sum of BIGINT is a HUGEINT in DuckDB
        sum(interruptions)::bigint as interruptions,
        sum(save_s) as save_s,
        sum(saves) as saves,
        sum(restart_s) as restart_s,
        sum(restarts) as restarts,
        sum(interval_s) as interval_s,
        sum(intervals) as intervals,
        sum(all_allocated_chip_s) as all_allocated_chip_s,
        sum(productive_chip_s) as productive_chip_s,
        sum(all_allocated_chip_s) filter (where predicted_productive_chip_s is not null)
            as modelled_chip_s,
        sum(predicted_productive_chip_s) as predicted_productive_chip_s,
        sum(advised_productive_chip_s) as advised_productive_chip_s,
        sum(chip_hours_saved) as chip_hours_saved
    from advice
    group by cube (workload_class, framework, chip_generation)
    -- no job, no slice (the cube's grand total exists even over no rows)
    having count(*) > 0
),

means as (
    select
        *,
        mpg_ratio(interruptions * 3600, all_allocated_s) as interruptions_per_hour,
        mpg_ratio(all_allocated_s, interruptions) as mtbi_s,
        mpg_ratio(save_s, saves) as mean_save_s,
        mpg_ratio(restart_s, restarts) as mean_restart_s,
        mpg_ratio(interval_s, intervals) as observed_interval_s
    from sums
),

final as (
    select
        means.workload_class,
        means.framework,
        means.chip_generation,
        means.jobs,
        means.jobs_to_change,
        means.all_allocated_s,
        means.interruptions,
        means.interruptions_per_hour,
        means.mtbi_s,
        means.mean_save_s,
        means.mean_restart_s,
        means.observed_interval_s,
        case
            when means.mean_save_s > 0 then sqrt(2 * means.mean_save_s * means.mtbi_s)
        end as advised_interval_s,
        mpg_ratio(means.productive_chip_s, means.all_allocated_chip_s) as rg,
        mpg_ratio(means.predicted_productive_chip_s, means.modelled_chip_s) as rg_predicted,
        mpg_ratio(means.advised_productive_chip_s, means.modelled_chip_s) as rg_advised,
        means.chip_hours_saved,
        period.days,
        means.chip_hours_saved / period.days as chip_hours_saved_per_day
    from means
    cross join period
)

select * from final
order by workload_class nulls first, framework nulls first, chip_generation nulls first
