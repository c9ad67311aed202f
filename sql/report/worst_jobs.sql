-- The jobs that lost the most over the period, for the whole fleet and for each value of each
-- slice column, so that the page can go from a slice to its worst jobs: the layer's one ranking
-- (mpg_jobs, sql/semantic/jobs.sql: dollars lost, the jobs of unpriced generations after the
-- priced ones by chip-hours lost), each job with its lost chip-time and dollars by ledger
-- category and its unprofiled chip-time (in its loss, as a part of its own).
-- grain: one row per job ranked within $fleet_limit of the fleet's priced jobs or of its unpriced
-- ones (priced_rank: the rank within either), or within $slice_limit of its chip generation,
-- workload class, framework or team.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE): the report's period, inclusive;
--   $fleet_limit, $slice_limit (INTEGER).
-- input: the macro mpg_jobs.
with jobs as (
    select
        *,
        lost_usd is not null as priced,
        -- the rank among the priced jobs, or among the unpriced ones (which rank after them)
        row_number() over (partition by lost_usd is null order by rank) as priced_rank
    from mpg_jobs($metric_version, $first, $last)
),

final as (
    select *
    from jobs
    where priced_rank <= $fleet_limit
        or least(chip_generation_rank, workload_class_rank, framework_rank, team_rank)
            <= $slice_limit
)

select * from final
order by rank
