-- <table>_current: the rows of the current metric version, the one readers should use; a new
-- version is written beside the old one and this view switches to it (docs/metrics.md).
-- grain: the table's (job_day_goodput, chip_time_ledger or goodput_by_slice), one metric version.
-- input: `versioned_table` stands for the table and `versioned_table_current` for its view (both
-- renamed when rendered, mpg.sql.files.render_sql); $current_version, a validated metric version
-- name, is written in as a literal because neither engine binds parameters in a view.
create or replace view versioned_table_current as
select * from versioned_table
where metric_version = $current_version
