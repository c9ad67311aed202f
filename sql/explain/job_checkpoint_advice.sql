-- One job's published checkpoint advice (over its whole life: the table has no per-day rows).
-- grain: one row, or none for a job that is not training or has no runtime records.
-- parameters: $job_id (VARCHAR).
-- input: table checkpoint_advice.
with advice as (
    select * from checkpoint_advice
    where job_id = $job_id
),

final as (
    select * from advice
)

select * from final
