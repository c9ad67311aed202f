-- The report's scorecard: the fleet and each slice over the report's period, worst first, beside
-- the previous period of equal length (mpg_scorecard, sql/semantic/scorecard.sql).
-- grain: one row for the fleet and one per value of each slice column.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE): the report's period, inclusive.
-- input: the macro mpg_scorecard.
with scorecard as (
    select * from mpg_scorecard($metric_version, $first, $last)
),

final as (
    select * from scorecard
)

select * from final
