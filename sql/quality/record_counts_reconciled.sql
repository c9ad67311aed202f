-- record_counts_reconciled: do the published record counts add up, agree with the quarantine
-- table and equal the counts the run made?
-- grain: one row per source found in record_counts, run_record_counts or quarantine.
-- unaccounted = records_read - accepted - duplicates - quarantined (NULL without a published
-- row); quarantine_difference = quarantined - the quarantine table's rows of the source;
-- run_differences = how many of the four published counts differ from the run's (a missing row
-- differs in all four). Each is 0 where the counts reconcile.
-- inputs: tables record_counts, quarantine; relation run_record_counts (RECORD_COUNTS, the
-- counts the Beam pipeline made, registered by the caller).
with published as (
    select * from record_counts
),

run as (
    select * from run_record_counts
),

quarantine_rows as (
    select
        source,
        count(*) as quarantine_rows
    from quarantine
    group by source
),

sources as (
    select source from published
    union
    select source from run
    union
    select source from quarantine_rows
),

final as (
    select
        s.source,
        p.records_read - p.accepted - p.duplicates - p.quarantined as unaccounted,
        coalesce(p.quarantined, 0) - coalesce(q.quarantine_rows, 0) as quarantine_difference,
        (p.records_read is distinct from r.records_read)::bigint
        + (p.accepted is distinct from r.accepted)::bigint
        + (p.duplicates is distinct from r.duplicates)::bigint
        + (p.quarantined is distinct from r.quarantined)::bigint as run_differences
    from sources as s
    left join published as p using (source)
    left join run as r using (source)
    left join quarantine_rows as q using (source)
)

select * from final
order by source
