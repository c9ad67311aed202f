-- Why records were quarantined, by source and kind of reason. A reason's kind is its text before
-- the first colon ("unknown framework: mxnet" is of kind "unknown framework"), so that a value
-- from the logs does not make a kind of its own; the full reasons are counted and one is shown.
-- grain: one row per source and reason kind.
-- input: table quarantine.
with records as (
    select source, reason, split_part(reason, ':', 1) as reason_kind
    from quarantine
),

final as (
    select
        source,
        reason_kind,
        count(*) as records,
        count(distinct reason) as reasons,
        min(reason) as example
    from records
    group by source, reason_kind
)

select * from final
order by records desc, source, reason_kind
