-- The report's teams and queues: each team (who pays) and each queue (where jobs waited) over
-- the report's period, worst first, beside the previous period of equal length (the scorecard's
-- rows: mpg_scorecard), with the chip-time of every ledger category (mpg_rollup's), for the
-- bars a click picks a team on.
-- grain: one row per team and per queue with job-days in the period (a NULL team or queue: the
--   input named none, a row of its own).
-- parameters: $metric_version (VARCHAR); $first, $last (DATE): the report's period, inclusive.
-- input: the macros mpg_scorecard (sql/semantic/scorecard.sql), mpg_rollup.
with scorecard as (
    select *
    from mpg_scorecard($metric_version, $first, $last)
    where slice_kind in ('team', 'queue')
),

categories as (
    select
        slice_kind,
        slice,
        scheduling_chip_s,
        runtime_idle_chip_s,
        lost_progress_chip_s,
        checkpoint_save_chip_s,
        checkpoint_restore_chip_s,
        compile_chip_s,
        init_chip_s,
        data_wait_chip_s,
        program_loss_chip_s,
        productive_unprofiled_chip_s,
        all_allocated_chip_s
    from mpg_rollup($metric_version, $first, $last, false)
    where slice_kind in ('team', 'queue')
),

final as (
    select scorecard.*, categories.* exclude (slice_kind, slice)
    from scorecard
    inner join categories
        on scorecard.slice_kind = categories.slice_kind
        and scorecard.slice is not distinct from categories.slice
)

select * from final
order by slice_kind desc, rank
