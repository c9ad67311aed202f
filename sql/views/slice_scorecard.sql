-- slice_scorecard: the fleet and each slice (chip generation, workload class, framework, job
-- size class) over the last 7 days published (all of them where fewer), worst first, beside the
-- 7 days before: what `mpg run` prints when it ends (mpg_scorecard, sql/semantic/scorecard.sql).
-- grain: one row for the fleet and one per value of each slice column, current metric version.
-- input: the macro mpg_scorecard; views current_metric_version, job_day_goodput_current.
create or replace view slice_scorecard as
with published as (
    select min(day) as first_day, max(day) as last_day from job_day_goodput_current
),

scorecard as (
    select *
    from mpg_scorecard(
        (select metric_version from current_metric_version),
        (select greatest(first_day, cast(last_day - to_days(6) as date)) from published),
        (select last_day from published)
    )
),

final as (
    select * from scorecard
)

select * from final
order by kind_order, rank
