"""The independent route to the job-day chip-time: one hand-written DuckDB query over the raw
trace files (sql/crosscheck/job_day_chip_time.sql), for tests and `make bench`.

    >>> import duckdb
    >>> with duckdb.connect() as con:
    ...     rows = crosscheck_job_days(con, "data/sample_traces")
    >>> rows.column_names[:3]
    ['day', 'job_id', 'wanted_chip_s']
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from mpg.definitions.catalog import load_catalog
from mpg.definitions.vocabulary import (
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    SPAN_KINDS,
    WORKLOAD_CLASSES,
)
from mpg.sql.files import load_sql


def crosscheck_job_days(con: duckdb.DuckDBPyConnection, traces: str) -> pa.Table:
    """Wanted, all-allocated and productive chip-seconds and the ledger's categories per job and
    day of the trace root `traces` (a local folder: DuckDB reads it itself)."""
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    params = {
        "traces": traces,
        "chip_generations": load_catalog().generations,
        "workload_classes": list(WORKLOAD_CLASSES),
        "frameworks": list(FRAMEWORKS),
        "job_states": list(JOB_STATES),
        "span_kinds": list(SPAN_KINDS),
        "kinds_with_step": list(KINDS_WITH_STEP),
    }
    return con.sql(load_sql("crosscheck/job_day_chip_time.sql"), params=params).to_arrow_table()
