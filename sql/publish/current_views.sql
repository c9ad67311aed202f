-- *_current: each metric-versioned table as seen through the current metric version, the one
-- DIR/mpg.toml names ([metrics] current; v1 without the file, mpg.config). Dashboards read these
-- and follow a version switch without naming a version.
-- grain: that of the table each view filters (one metric version only).
-- $current_version is not a bound parameter: DuckDB cannot bind one in a view definition, so
-- `current_views_sql` (pipelines/publish.py) replaces it with a quoted literal, only after
-- checking it is a name of mpg.metrics.METRIC_VERSIONS; no text from a file reaches this SQL.
-- Three statements, one per view (like the macros.sql files).
create or replace view job_day_goodput_current as
select * from job_day_goodput
where metric_version = $current_version;

create or replace view chip_time_ledger_current as
select * from chip_time_ledger
where metric_version = $current_version;

create or replace view goodput_by_slice_current as
select * from goodput_by_slice
where metric_version = $current_version;
