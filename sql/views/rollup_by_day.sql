-- rollup_by_day: every roll-up of the semantic layer per day, current metric version: the fleet,
-- each slice column and every combination of them, and each job, with every figure
-- (mpg_rollup, sql/semantic/rollup.sql). goodput_by_size_class and cost_by_slice are columns of
-- it; the report reads the same roll-up for its period.
-- grain: one row per day and combination of size_class, workload_class, framework and
-- chip_generation (a NULL slice column means "all": `slice_kind` names the columns grouped by),
-- one per day and team, queue and owner (slice_kind 'team', 'queue', 'owner': one-column
-- slices, not crossed with the others), and one per job and day (slice_kind 'job').
-- input: the macro mpg_rollup; view current_metric_version.
create or replace view rollup_by_day as
with slices as (
    select *
    from mpg_rollup((select metric_version from current_metric_version), null, null, true)
),

final as (
    select * from slices
)

select * from final
order by day, slice_kind, size_class nulls first, workload_class nulls first,
    framework nulls first, chip_generation nulls first, team nulls first,
    queue nulls first, owner nulls first, job_id nulls first
