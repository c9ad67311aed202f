"""Goodput by slice (workload class x framework x chip generation, every roll-up) of job-days.

The cube is sql/publish/goodput_by_slice.sql over the job-day rows, with the ratio macros of
sql/publish/macros.sql, run in this thread's in-memory DuckDB on one thread (`run_goodput_sql`)
so that floating-point sums add up in one order and the same rows always give the same bits.

    >>> from mpg.schemas import JOB_DAY_GOODPUT
    >>> goodput_by_slice(JOB_DAY_GOODPUT.empty_table()).num_rows
    0
"""

from __future__ import annotations

import pyarrow as pa

from mpg.schemas import GOODPUT_BY_SLICE, conform
from mpg.sql.files import run_goodput_sql


def goodput_by_slice(job_day_goodput: pa.Table) -> pa.Table:
    """GOODPUT_BY_SLICE rows of some job-day rows (those of one day, or of many)."""
    rows = run_goodput_sql("publish/goodput_by_slice.sql", {"job_day_goodput": job_day_goodput})
    return conform(rows, GOODPUT_BY_SLICE)
