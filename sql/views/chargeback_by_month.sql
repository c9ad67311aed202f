-- chargeback_by_month: per calendar month, what each team (who pays: a Slurm account, a
-- Kubernetes namespace, a Philly virtual cluster) wanted, used and lost, in chip-time and
-- dollars, and to what; within the team, by queue and by owner (mpg_chargeback,
-- sql/semantic/chargeback.sql: the columns and levels are described there).
-- grain: one row per month and level: the fleet, each team, each team and queue, each team and
-- owner (a NULL team, queue or owner below the fleet: the input named none). Each level's rows
-- add up to their month's fleet row, to the cent.
-- input: the macro mpg_chargeback; view current_metric_version.
create or replace view chargeback_by_month as
with chargeback as (
    select *
    from mpg_chargeback((select metric_version from current_metric_version), null, null, true)
),

final as (
    select * from chargeback
)

select * from final
order by month, level, rank
