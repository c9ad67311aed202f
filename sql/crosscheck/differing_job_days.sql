-- How many job_day_goodput rows of one metric version two runs disagree on: rows in one and not
-- the other, both ways (the benchmark's daily run against a full recompute of the same files).
-- grain: one row for the whole comparison.
-- parameters: $left, $right (VARCHAR[]: job_day_goodput's data files), $version (VARCHAR).
with left_rows as (
    select * from read_parquet($left) where metric_version = $version
),

right_rows as (
    select * from read_parquet($right) where metric_version = $version
)

select count(*) as differing_rows
from (
    (from left_rows except all from right_rows)
    union all
    (from right_rows except all from left_rows)
)
