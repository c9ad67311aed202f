-- The expectations that the published data did not meet (severity warn: a failed expectation
-- of severity fail stops the run before it publishes).
-- grain: one row per failed expectation.
-- input: table validation_results.
with results as (
    select * from validation_results
),

final as (
    select
        suite,
        target,
        expectation,
        "column",
        severity,
        description,
        element_count,
        unexpected_count,
        unexpected_sample
    from results
    where not success
)

select * from final
order by suite, target, expectation, "column", description
