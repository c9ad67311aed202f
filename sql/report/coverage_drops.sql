-- Days on which PG's coverage fell: the share of the fleet's productive chip-time with a
-- program profile, day by day, and the days it fell by more than $drop (a share, e.g. 0.1 for
-- 10 points) from the day before. Coverage is what PG and MPG rest on: a day on which fewer
-- jobs were profiled has a PG measured on less of its work (docs/report.md).
-- grain: one row per day of the period with productive chip-time whose coverage fell more than
--   $drop from the previous such day.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL): the report's period;
--   $drop (DOUBLE).
-- input: the macro mpg_rollup (sql/semantic/rollup.sql), per day.
with days as (
    select day, pg_coverage, profiled_chip_s, productive_chip_s
    from mpg_rollup($metric_version, $first, $last, true)
    where slice_kind = 'fleet' and pg_coverage is not null
),

changes as (
    select
        day,
        pg_coverage,
        lag(day) over (order by day) as previous_day,
        lag(pg_coverage) over (order by day) as previous_pg_coverage
    from days
),

final as (
    select *, pg_coverage - previous_pg_coverage as change
    from changes
    where previous_pg_coverage - pg_coverage > $drop
)

select * from final
order by day
