-- The report's queue waiting: per queue and job size class over the report's period, the
-- chip-time its jobs spent waiting and how long they waited (mpg_queue_waiting,
-- sql/semantic/queues.sql, where "waiting" is defined).
-- grain: one row per queue (NULL: none named) and size class, and one per queue for all sizes;
--   the queues most waiting first, each with all its sizes first, then by size.
-- parameters: $metric_version (VARCHAR); $first, $last (DATE): the report's period, inclusive.
-- input: the macro mpg_queue_waiting.
with queues as (
    select * exclude (month)
    from mpg_queue_waiting($metric_version, $first, $last, false)
),

final as (
    select
        *,
        -- the queues by their jobs' waiting chip-time, most first; within one, all sizes first
        sum(waiting_chip_s) filter (where size_class is null) over (partition by queue)
            as queue_waiting_chip_s
    from queues
)

select * exclude (queue_waiting_chip_s)
from final
order by queue_waiting_chip_s desc, queue nulls first, size_rank nulls first
