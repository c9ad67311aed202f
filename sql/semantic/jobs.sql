-- mpg_jobs: every job over a period, ranked worst first, with what it could attain.
-- grain: one row per job and metric version with job-days in the period.
-- parameters: p_version (VARCHAR); p_first, p_last (DATE, NULL: an open end), inclusive.
-- columns: mpg_rollup's job rows (the job's sums and ratios, its main_loss), then
--   rank: THE ranking of worst jobs, the one every surface uses (the worst_jobs view, the
--     report's worst jobs and fix list, mpg explain): dollars lost, most first; the jobs of a
--     generation without a price after every priced one (their dollars are unknown, not zero),
--     among themselves by chip-hours lost; then chip-hours lost, then job id. Where nothing is
--     priced that is the ranking by chip-hours lost.
--   chip_generation_rank, workload_class_rank, framework_rank, size_class_rank: the same order
--     within the job's slice;
--   attainable_pg, attainable_jobs: what the best jobs of the job's chip generation, framework
--     and workload class reach: the chip-time-weighted 90th percentile of their PG over the
--     period (the smallest PG such that the jobs at or below it hold at least 90% of the
--     group's profiled productive chip-time), over the attainable_jobs jobs of the group with a
--     PG; NULL where fewer than 5 have one (too few to say what is attainable);
--   attainable_gap (attainable_pg - pg, where both are known), recoverable_chip_s and
--     recoverable_usd: the program loss the job would not have had at attainable_pg,
--     profiled chip-time x the gap where the gap is positive, else 0.
-- inputs: the macros mpg_rollup (sql/semantic/rollup.sql), mpg_ratio.
create or replace temp macro mpg_jobs(p_version, p_first, p_last) as table
with jobs as (
    select * exclude (day)
    from mpg_rollup(p_version, p_first, p_last, false)
    where slice_kind = 'job'
),

ranked as (
    select
        *,
        row_number() over (
            partition by metric_version
            order by lost_usd desc nulls last, lost_chip_s desc, job_id
        ) as rank
    from jobs
),

profiled as (
    select
        metric_version,
        chip_generation,
        framework,
        workload_class,
        pg,
        sum(profiled_chip_s) over (
            partition by metric_version, chip_generation, framework, workload_class
            -- (no NULL here: NULLS FIRST is BigQuery's default, so the view means the same there)
            order by pg nulls first, job_id nulls first
            rows between unbounded preceding and current row
        ) as profiled_below,
        sum(profiled_chip_s) over (
            partition by metric_version, chip_generation, framework, workload_class
        ) as profiled_in_group
    from jobs
    where pg is not null and profiled_chip_s > 0
),

attainable as (
    select
        metric_version,
        chip_generation,
        framework,
        workload_class,
        count(*) as attainable_jobs,
        case when count(*) >= 5 then
            min(pg) filter (where profiled_below >= 0.9 * profiled_in_group)
        end as attainable_pg
    from profiled
    group by metric_version, chip_generation, framework, workload_class
),

final as (
    select
        ranked.*,
        row_number() over (partition by ranked.metric_version, ranked.chip_generation
            order by ranked.rank) as chip_generation_rank,
        row_number() over (partition by ranked.metric_version, ranked.workload_class
            order by ranked.rank) as workload_class_rank,
        row_number() over (partition by ranked.metric_version, ranked.framework
            order by ranked.rank) as framework_rank,
        row_number() over (partition by ranked.metric_version, ranked.size_class
            order by ranked.rank) as size_class_rank,
        -- (a NULL team, queue or owner is one partition: the jobs whose input named none)
        row_number() over (partition by ranked.metric_version, ranked.team
            order by ranked.rank) as team_rank,
        row_number() over (partition by ranked.metric_version, ranked.queue
            order by ranked.rank) as queue_rank,
        row_number() over (partition by ranked.metric_version, ranked.owner
            order by ranked.rank) as owner_rank,
        attainable.attainable_pg,
        coalesce(attainable.attainable_jobs, 0) as attainable_jobs,
        attainable.attainable_pg - ranked.pg as attainable_gap,
        case when attainable.attainable_pg > ranked.pg
            then ranked.profiled_chip_s * (attainable.attainable_pg - ranked.pg)
            else 0.0
        end as recoverable_chip_s,
        case when attainable.attainable_pg > ranked.pg
            then ranked.profiled_chip_s * (attainable.attainable_pg - ranked.pg) / 3600
                * ranked.usd_per_chip_hour
            else ranked.usd_per_chip_hour * 0.0
        end as recoverable_usd
    from ranked
    left join attainable using (metric_version, chip_generation, framework, workload_class)
)

select * from final
order by metric_version, rank
