"""A job-day's SG, RG and MPG from the one definition every grain uses: the goodput macros of
sql/publish/macros.sql, applied by sql/publish/job_day_goodput.sql in an in-memory DuckDB over the
job-days' chip-seconds (an Arrow table; nothing is written).

So a job-day and a slice of one job-day publish the same ratios, by construction: the accounting
(`mpg.transforms.account`) emits chip-seconds and the measured PG, never a ratio of its own.

    >>> import datetime as dt, pyarrow as pa
    >>> never_scheduled = pa.table({"day": [dt.date(2026, 11, 20)], "job_id": ["j"],
    ...     "metric_version": ["v1"], "wanted_chip_s": [28800.0], "all_allocated_chip_s": [0.0],
    ...     "productive_chip_s": [0.0], "ideal_chip_s": [0.0], "pg": [0.25]})
    >>> job_day_ratios(never_scheduled).select(["sg", "rg", "pg", "mpg"]).to_pylist()
    [{'sg': 0.0, 'rg': None, 'pg': 0.25, 'mpg': 0.0}]
"""

from __future__ import annotations

import pyarrow as pa

from mpg.sql.files import run_goodput_sql


def job_day_ratios(chip_time: pa.Table) -> pa.Table:
    """`chip_time` (one row per job, day and metric version: wanted_chip_s, all_allocated_chip_s,
    productive_chip_s, ideal_chip_s, pg and any other columns) with sg, rg and mpg added, in the
    order day, job_id, metric_version."""
    return run_goodput_sql("publish/job_day_goodput.sql", {"job_day_chip_time": chip_time})
