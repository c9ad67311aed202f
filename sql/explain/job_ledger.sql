-- One job's published chip-time ledger, per day and over all its days, each category with its
-- share of the wanted chip-time of the same day (or of all the job's days).
-- grain: one row per day and category of the job (day set), plus one row per category for all
-- its days (day NULL). Zero rows are absent, as in the table.
-- parameters: $job_id (VARCHAR), $metric_version (VARCHAR).
-- input: table chip_time_ledger; the macro mpg_ratio.
with ledger as (
    select day, category, chip_s
    from chip_time_ledger
    where job_id = $job_id and metric_version = $metric_version
),

-- Every sum in a fixed order (by day, by category): a sum of doubles depends on its order in
-- the last digits, and DuckDB's threads hand rows on in an order that changes from run to run.
categories as (
    select day, category, sum(chip_s order by day) as chip_s
    from ledger
    group by grouping sets ((day, category), (category))
),

final as (
    select
        day,
        category,
        chip_s,
        -- the ledger adds up to wanted time: a day's (or the lifetime's) rows sum to it
        mpg_ratio(chip_s, sum(chip_s) over (
            partition by day order by category
            rows between unbounded preceding and unbounded following
        )) as share
    from categories
)

select * from final
order by day nulls last, category
