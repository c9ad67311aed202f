-- Replace some days of a day-partitioned table with the staged rows of those days, in one MERGE:
-- one statement is atomic, so a reader sees every replaced day old or every one new, and a day
-- in @days with no staged rows is emptied. The filter on t.day prunes the target's partitions.
-- BigQuery only (publishing machinery, not a report): written in its dialect.
-- grain: the target table's.
-- input: `target` (the table) and `staged` (the new rows, loaded from Parquet), both renamed when
-- rendered; @days ARRAY<DATE>, every day to replace. `insert row` is spelled out by column name
-- when rendered (pipelines/bigquery.py).
merge target as t
using staged as s
on false
when not matched by source and t.day in unnest(@days) then delete
when not matched then insert row
