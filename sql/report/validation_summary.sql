-- How many expectations the published data was checked against, and how many it did not meet.
-- grain: one row.
-- input: table validation_results.
with results as (
    select * from validation_results
),

final as (
    select
        count(*) as checked,
        count(*) filter (where not success) as failed
    from results
)

select * from final
