-- Goodput per job size class over time: how well jobs of each size get their chips (SG).
-- grain: one row per day and size class.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE or NULL for an open end): the
--   report's period, inclusive.
-- input: the macro mpg_rollup (sql/semantic/rollup.sql), per day; view job_size_classes (where
-- the class bounds live, and their order).
with classes as (
    select *
    from mpg_rollup($metric_version, $first, $last, true)
    where slice_kind = 'size_class'
),

final as (
    select
        classes.day,
        classes.size_class,
        size_classes.rank as size_order,
        classes.jobs,
        classes.wanted_chip_s,
        classes.pg_coverage,
        classes.sg,
        classes.rg,
        classes.pg,
        classes.mpg
    from classes
    inner join job_size_classes as size_classes using (size_class)
)

select * from final
order by size_order, day
