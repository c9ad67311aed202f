-- queue_waiting: per calendar month and queue (a Slurm partition, a Kueue LocalQueue), the
-- chip-time its jobs wanted while waiting for their chips, how long they waited (median and 90th
-- percentile per job size class, and over all its jobs) and what interruptions cost them
-- (mpg_queue_waiting, sql/semantic/queues.sql, where "waiting" is defined).
-- grain: one row per month, queue (NULL: the input named none) and size class, and one per month
-- and queue with size_class NULL (all its jobs).
-- input: the macro mpg_queue_waiting; view current_metric_version.
create or replace view queue_waiting as
with queues as (
    select *
    from mpg_queue_waiting((select metric_version from current_metric_version), null, null, true)
),

final as (
    select * from queues
)

select * from final
order by month, queue nulls first, size_rank nulls first
