-- job_size_classes: the job size classes, by chips requested; the one place their bounds live.
-- grain: one row per size class.
-- Each class is 8x the one before (8 chips: one host of most accelerators): one chip (debugging,
-- small serving), one host, up to 8 hosts, up to 64 hosts, and beyond (pod-scale, multi-slice).
-- docs/views.md says why. max_chips is NULL for the open-ended last class; `rank` orders them
-- (the labels do not sort as text).
create or replace view job_size_classes as
with classes as (
    select * from (
        values
            (1, '1', 1, 1),
            (2, '2-8', 2, 8),
            (3, '9-64', 9, 64),
            (4, '65-512', 65, 512),
            (5, '513+', 513, null)
    ) as t (rank, size_class, min_chips, max_chips)
),

final as (
    select
        rank::integer as rank,
        size_class::varchar as size_class,
        min_chips::bigint as min_chips,
        max_chips::bigint as max_chips
    from classes
)

select * from final
order by rank
