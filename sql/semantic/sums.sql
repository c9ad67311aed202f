-- mpg_job_day_sums: every measure of mpg_job_days (sql/semantic/job_days.sql) summed over a group
-- of job-days, exactly (mpg_sum): the one list of what a roll-up adds up, so that mpg_rollup and
-- mpg_chargeback cannot sum differently.
-- parameter: f, the row of the facts being grouped (the facts' name in the FROM: a row as a
--   struct in DuckDB, its fields the columns of that table in BigQuery, mpg.sql.bigquery_dialect).
-- returns: a struct, one field per measure, named as the measure; `unnest(...)` in a select list
--   makes them columns: wanted_chip_s, all_allocated_chip_s, productive_chip_s, ideal_chip_s,
--   profiled_chip_s, <category>_chip_s for each ledger category but ideal, lost_chip_s and its
--   four parts, priced_chip_s, unpriced_chip_s, wanted_usd, ideal_usd, <category>_usd, lost_usd
--   and its four parts, kwh, unpowered_chip_s.
-- inputs: the macro mpg_sum (sql/publish/macros.sql).
create or replace temp macro mpg_job_day_sums(f) as struct_pack(
    wanted_chip_s := mpg_sum(f.wanted_chip_s),
    all_allocated_chip_s := mpg_sum(f.all_allocated_chip_s),
    productive_chip_s := mpg_sum(f.productive_chip_s),
    ideal_chip_s := mpg_sum(f.ideal_chip_s),
    profiled_chip_s := mpg_sum(f.profiled_chip_s),
    scheduling_chip_s := mpg_sum(f.scheduling_chip_s),
    runtime_idle_chip_s := mpg_sum(f.runtime_idle_chip_s),
    lost_progress_chip_s := mpg_sum(f.lost_progress_chip_s),
    checkpoint_save_chip_s := mpg_sum(f.checkpoint_save_chip_s),
    checkpoint_restore_chip_s := mpg_sum(f.checkpoint_restore_chip_s),
    compile_chip_s := mpg_sum(f.compile_chip_s),
    init_chip_s := mpg_sum(f.init_chip_s),
    data_wait_chip_s := mpg_sum(f.data_wait_chip_s),
    program_loss_chip_s := mpg_sum(f.program_loss_chip_s),
    productive_unprofiled_chip_s := mpg_sum(f.productive_unprofiled_chip_s),
    lost_chip_s := mpg_sum(f.lost_chip_s),
    lost_scheduling_chip_s := mpg_sum(f.lost_scheduling_chip_s),
    lost_runtime_chip_s := mpg_sum(f.lost_runtime_chip_s),
    lost_program_chip_s := mpg_sum(f.lost_program_chip_s),
    lost_unprofiled_chip_s := mpg_sum(f.lost_unprofiled_chip_s),
    priced_chip_s := mpg_sum(f.priced_chip_s),
    unpriced_chip_s := mpg_sum(f.unpriced_chip_s),
    wanted_usd := mpg_sum(f.wanted_usd),
    ideal_usd := mpg_sum(f.ideal_usd),
    scheduling_usd := mpg_sum(f.scheduling_usd),
    runtime_idle_usd := mpg_sum(f.runtime_idle_usd),
    lost_progress_usd := mpg_sum(f.lost_progress_usd),
    checkpoint_save_usd := mpg_sum(f.checkpoint_save_usd),
    checkpoint_restore_usd := mpg_sum(f.checkpoint_restore_usd),
    compile_usd := mpg_sum(f.compile_usd),
    init_usd := mpg_sum(f.init_usd),
    data_wait_usd := mpg_sum(f.data_wait_usd),
    program_loss_usd := mpg_sum(f.program_loss_usd),
    productive_unprofiled_usd := mpg_sum(f.productive_unprofiled_usd),
    lost_usd := mpg_sum(f.lost_usd),
    lost_scheduling_usd := mpg_sum(f.lost_scheduling_usd),
    lost_runtime_usd := mpg_sum(f.lost_runtime_usd),
    lost_program_usd := mpg_sum(f.lost_program_usd),
    lost_unprofiled_usd := mpg_sum(f.lost_unprofiled_usd),
    kwh := mpg_sum(f.kwh),
    unpowered_chip_s := mpg_sum(f.unpowered_chip_s)
)
