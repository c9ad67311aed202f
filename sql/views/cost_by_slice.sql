-- cost_by_slice: what each slice's chip-time cost and lost, in dollars and kWh, current metric
-- version.
-- grain: one row per day and combination of size_class, workload_class, framework and
-- chip_generation, where a NULL slice column means "all" (GROUP BY CUBE: every roll-up present,
-- as in goodput_by_size_class).
-- Dollars cover only the job-days whose chip generation has a price: their chip-time is
-- priced_chip_s, the rest unpriced_chip_s, never guessed; a dollar column is NULL where nothing
-- in the slice is priced. lost_usd is THE dollars lost (every ledger category but ideal:
-- sql/semantic/job_days.sql), the sum of its parts lost_scheduling_usd, lost_runtime_usd,
-- lost_program_usd and lost_unprofiled_usd. kWh (an estimate from board power and PUE, not a
-- measurement) cover the job-days whose generation has a board power; unpowered_chip_s the rest.
-- input: views rollup_by_day (the layer's roll-up, mpg_rollup), job_size_classes (its order).
create or replace view cost_by_slice as
with slices as (
    select * from rollup_by_day
    -- the CUBE's rows (teams, queues and owners are in team_scorecard and chargeback_by_month)
    where slice_kind not in ('job', 'team', 'queue', 'owner')
),

final as (
    select
        day,
        metric_version,
        size_class,
        workload_class,
        framework,
        chip_generation,
        wanted_chip_s,
        priced_chip_s,
        unpriced_chip_s,
        wanted_usd,
        usd_per_chip_hour,
        ideal_usd,
        lost_usd,
        lost_scheduling_usd,
        lost_runtime_usd,
        lost_program_usd,
        lost_unprofiled_usd,
        kwh,
        unpowered_chip_s
    from slices
)

select final.*
from final
left join job_size_classes as classes using (size_class)
order by final.day, classes.rank nulls first, final.workload_class nulls first,
    final.framework nulls first, final.chip_generation nulls first
