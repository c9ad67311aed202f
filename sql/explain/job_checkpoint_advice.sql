-- One job's published checkpoint advice (over its whole life: the table has no per-day rows).
-- grain: one row, or none for a job that is not training or has no runtime records.
-- parameters: $job_id (VARCHAR).
-- columns: checkpoint_advice's, and its saving in dollars (mpg_advice: NULL without a price).
-- input: the macro mpg_advice (sql/semantic/advice.sql).
with advice as (
    select * from mpg_advice(null, null)
    where job_id = $job_id
),

final as (
    select * from advice
)

select * from final
