-- How many job_day_goodput rows two runs disagree on: rows in one and not the other, both ways
-- (the benchmark's daily run against a full recompute of the same files).
-- grain: one row for the whole comparison.
-- parameters: $left, $right (VARCHAR globs of job_day_goodput Parquet files).
select count(*) as differing_rows
from (
    (from read_parquet($left) except all from read_parquet($right))
    union all
    (from read_parquet($right) except all from read_parquet($left))
)
