-- goodput_by_size_class: goodput_by_slice with the job size class as a fourth slice column,
-- current metric version.
-- grain: one row per day and combination of size_class, workload_class, framework and
-- chip_generation, where a NULL slice column means "all" (GROUP BY CUBE: every roll-up present;
-- the rows with size_class NULL are goodput_by_slice_current's, up to floating-point rounding).
-- Every ratio is a ratio of sums of chip-seconds, as the layer's roll-up takes them
-- (mpg_rollup, sql/semantic/rollup.sql; mpg_goodput_ratios, sql/publish/macros.sql).
-- input: views rollup_by_day (the layer's roll-up, mpg_rollup), job_size_classes (its order).
create or replace view goodput_by_size_class as
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
        all_allocated_chip_s,
        productive_chip_s,
        ideal_chip_s,
        pg_coverage,
        sg,
        rg,
        pg,
        mpg
    from slices
)

select final.*
from final
left join job_size_classes as classes using (size_class)
order by final.day, classes.rank nulls first, final.workload_class nulls first,
    final.framework nulls first, final.chip_generation nulls first
