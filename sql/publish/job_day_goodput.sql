-- job_day_goodput: each job-day's chip-seconds with its ratios, from the one definition of them
-- (mpg_goodput_ratios, sql/publish/macros.sql) that every roll-up uses too.
-- grain: one row per job, day and metric version.
-- A job-day is a roll-up of one: `profiled` is its productive time where it has a PG, so its PG
-- from the macro is ideal / productive and MPG is ideal / wanted, exactly; and MPG is 0 where it
-- wanted chips and kept nothing, as in every slice. Its `pg` column stays the PG measured from
-- its profile records (spec, Accounting 4), which defines ideal time and exists even where no
-- productive time is there to weigh it.
-- input: table job_day_chip_time (transforms/account.py: the chip-seconds, chips_requested, pg
-- and the slice columns of each job-day); the macros of sql/publish/macros.sql.
with job_days as (
    select * from job_day_chip_time
),

with_ratios as (
    select
        *,
        mpg_goodput_ratios(
            wanted_chip_s,
            all_allocated_chip_s,
            productive_chip_s,
            ideal_chip_s,
            mpg_profiled(productive_chip_s, pg)
        ) as ratios
    from job_days
),

final as (
    select
        * exclude (ratios),
        ratios.sg,
        ratios.rg,
        ratios.mpg
    from with_ratios
)

select * from final
order by day, job_id, metric_version
