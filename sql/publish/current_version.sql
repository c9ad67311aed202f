-- current_metric_version: the metric version the *_current views and the analysts' views show,
-- the one DIR/mpg.toml names (v1 without it); the semantic layer's views pass it to its macros.
-- grain: one row.
-- input: $current_version, a validated metric version name, written in as a literal (neither
-- engine binds parameters in a view); `current_metric_version` is renamed when rendered, to be
-- qualified by a dataset in BigQuery.
create or replace view current_metric_version as
select $current_version as metric_version
