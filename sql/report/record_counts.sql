-- What each source's records became: read = accepted + exact duplicates + quarantined.
-- grain: one row per source.
-- input: table record_counts.
with counts as (
    select * from record_counts
),

final as (
    select
        source,
        records_read,
        accepted,
        duplicates,
        quarantined,
        records_read = accepted + duplicates + quarantined as adds_up
    from counts
)

select * from final
order by source
