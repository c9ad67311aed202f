-- When the tables were published and from what: the run log's latest run that published.
-- grain: one row (none where the log holds no published run), with how many runs the log holds.
-- input: table runs (the run log as it stood when these tables were published).
with published as (
    select *
    from runs
    where outcome = 'published'
),

latest as (
    select *
    from published
    order by ended_at desc nulls last, started_at desc
    limit 1
),

final as (
    select
        latest.run_id,
        latest.started_at,
        latest.ended_at,
        latest.command,
        latest.traces,
        latest.input_files,
        latest.input_bytes,
        latest.code_version,
        latest.metric_versions,
        (select count(*) from runs) as runs_logged
    from latest
)

select * from final
