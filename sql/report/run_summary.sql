-- What `mpg run` prints when it ends: the scorecard of the last 7 days published (all of them
-- where fewer), worst first, beside the 7 days before (the slice_scorecard view, the layer's
-- mpg_scorecard).
-- grain: one row for the fleet and one per value of each slice column.
-- input: view slice_scorecard.
with scorecard as (
    select * from slice_scorecard
),

final as (
    select * from scorecard
)

select * from final
