"""Goodput by slice (workload class x framework x chip generation, every roll-up) of job-days.

The cube is sql/publish/goodput_by_slice.sql over the job-day rows, with the ratio macros of
sql/publish/macros.sql, run in an in-memory DuckDB on one thread so that floating-point sums add
up in one order and the same rows always give the same bits.

    >>> from mpg.schemas import JOB_DAY_GOODPUT
    >>> goodput_by_slice(JOB_DAY_GOODPUT.empty_table()).num_rows
    0
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from mpg.schemas import GOODPUT_BY_SLICE, conform
from mpg.sql.files import load_sql


def goodput_by_slice(job_day_goodput: pa.Table) -> pa.Table:
    """GOODPUT_BY_SLICE rows of some job-day rows (those of one day, or of many)."""
    with duckdb.connect() as con:
        con.execute("SET threads = 1")
        con.execute(load_sql("publish/macros.sql"))
        con.register("job_day_goodput", job_day_goodput)
        rows = con.sql(load_sql("publish/goodput_by_slice.sql")).to_arrow_table()
    return conform(rows, GOODPUT_BY_SLICE)
