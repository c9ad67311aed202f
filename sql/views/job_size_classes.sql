-- job_size_classes: the job size classes, by chips requested; the one place their bounds live.
-- grain: one row per size class.
-- Each class is 8x the one before (8 chips: one host of most accelerators): one chip (debugging,
-- small serving), one host, up to 8 hosts, up to 64 hosts, and beyond (pod-scale, multi-slice).
-- docs/views.md says why. max_chips is NULL for the open-ended last class; `rank` orders them
-- (the labels do not sort as text).
create or replace view job_size_classes as
with classes as (
    -- one SELECT per class (not a VALUES list, which BigQuery's emulator cannot expand in a view
    -- that another view's subquery reads)
    select 1 as rank, '1' as size_class, 1 as min_chips, 1 as max_chips
    union all
    select 2, '2-8', 2, 8
    union all
    select 3, '9-64', 9, 64
    union all
    select 4, '65-512', 65, 512
    union all
    select 5, '513+', 513, null
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
