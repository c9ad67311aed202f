-- The tables and views the published database holds, so that the report can leave out, and say
-- so, a section whose table an older (or newer) mpg did not publish.
-- grain: one row per table or view of the main schema.
with objects as (
    select table_name, table_type
    from information_schema.tables
    where table_schema = 'main'
),

final as (
    select table_name, table_type from objects
)

select * from final
order by table_name
