-- One job's published chip-time ledger, per day and over all its days.
-- grain: one row per day and category of the job (day set), plus one row per category for all
-- its days (day NULL). Zero rows are absent, as in the table.
-- parameters: $job_id (VARCHAR), $metric_version (VARCHAR).
-- input: table chip_time_ledger.
with ledger as (
    select day, category, chip_s
    from chip_time_ledger
    where job_id = $job_id and metric_version = $metric_version
),

final as (
    select day, category, sum(chip_s) as chip_s
    from ledger
    group by grouping sets ((day, category), (category))
)

select * from final
order by day nulls last, category
