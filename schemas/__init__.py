"""Every record and table the pipeline reads or writes, declared once as a pyarrow schema.

Parquet files are written with these schemas, the DuckDB DDL is generated from them
(`mpg.schemas.ddl`), and the typed columns that the parse SQL produces are selected and cast by
them, so a column is renamed or retyped in exactly one place. `SCHEMA_VERSION` travels in each
schema's metadata and so in every Parquet footer.

    >>> from mpg.schemas import JOB_DAY_GOODPUT
    >>> JOB_DAY_GOODPUT.field("sg").type
    DataType(double)
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

SCHEMA_VERSION = "1"
UTC_US = pa.timestamp("us", tz="UTC")

# The three trace sources, in the order the spec lists them; also the folder names under a root.
SOURCES: tuple[str, ...] = ("scheduler", "runtime", "profiles")


def _schema(*fields: pa.Field) -> pa.Schema:
    return pa.schema(list(fields), metadata={"mpg.schema_version": SCHEMA_VERSION})


def _req(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


def _opt(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=True)


# Where an accepted record came from; carried through so a number can be traced to input lines.
PROVENANCE = (_req("file", pa.string()), _req("line", pa.int64()))

SCHEDULER_EVENTS = _schema(
    _req("type", pa.string()),
    _req("ts", UTC_US),
    _req("job_id", pa.string()),
    _opt("chips_requested", pa.int64()),
    _opt("chip_generation", pa.string()),
    _opt("workload_class", pa.string()),
    _opt("framework", pa.string()),
    _opt("priority", pa.int64()),
    _opt("owner", pa.string()),
    _opt("topology", pa.string()),
    _opt("task_index", pa.int64()),
    _opt("chips", pa.int64()),
    _opt("state", pa.string()),
    *PROVENANCE,
)

RUNTIME_SPANS = _schema(
    _req("job_id", pa.string()),
    _req("attempt", pa.int64()),
    _req("kind", pa.string()),
    _req("start", UTC_US),
    _req("end", UTC_US),
    _opt("step", pa.int64()),
    *PROVENANCE,
)

PROFILE_RECORDS = _schema(
    _req("job_id", pa.string()),
    _req("ts", UTC_US),
    _req("step", pa.int64()),
    _req("step_time_s", pa.float64()),
    _req("model_flops", pa.float64()),
    _opt("hbm_bytes", pa.float64()),
    _req("chips", pa.int64()),
    _opt("flops_source", pa.string()),
    *PROVENANCE,
)

RECORD_SCHEMAS: dict[str, pa.Schema] = {
    "scheduler": SCHEDULER_EVENTS,
    "runtime": RUNTIME_SPANS,
    "profiles": PROFILE_RECORDS,
}

# The order records are stored and accounted in: a total order (a record is one input line).
RECORD_ORDER: dict[str, list[str]] = {
    "scheduler": ["job_id", "ts", "file", "line"],
    "runtime": ["job_id", "start", "file", "line"],
    "profiles": ["job_id", "ts", "file", "line"],
}

# The column that puts a record on a UTC day in the partitioned record store.
DAY_COLUMN: dict[str, str] = {"scheduler": "ts", "runtime": "start", "profiles": "ts"}

QUARANTINE = _schema(
    _req("source", pa.string()),
    _req("file", pa.string()),
    _req("line", pa.int64()),
    _req("reason", pa.string()),
    _req("raw", pa.string()),
)

JOB_DAY_GOODPUT = _schema(
    _req("day", pa.date32()),
    _req("job_id", pa.string()),
    _req("metric_version", pa.string()),
    _req("workload_class", pa.string()),
    _req("framework", pa.string()),
    _req("chip_generation", pa.string()),
    _req("chips_requested", pa.int64()),
    _req("wanted_chip_s", pa.float64()),
    _req("all_allocated_chip_s", pa.float64()),
    _req("productive_chip_s", pa.float64()),
    _opt("ideal_chip_s", pa.float64()),
    _opt("sg", pa.float64()),
    _opt("rg", pa.float64()),
    _opt("pg", pa.float64()),
    _opt("mpg", pa.float64()),
)

CHIP_TIME_LEDGER = _schema(
    _req("day", pa.date32()),
    _req("job_id", pa.string()),
    _req("metric_version", pa.string()),
    _req("category", pa.string()),
    _req("chip_s", pa.float64()),
)

GOODPUT_BY_SLICE = _schema(
    _req("day", pa.date32()),
    _req("metric_version", pa.string()),
    _opt("workload_class", pa.string()),
    _opt("framework", pa.string()),
    _opt("chip_generation", pa.string()),
    _req("wanted_chip_s", pa.float64()),
    _req("all_allocated_chip_s", pa.float64()),
    _req("productive_chip_s", pa.float64()),
    _opt("ideal_chip_s", pa.float64()),
    _opt("pg_coverage", pa.float64()),
    _opt("sg", pa.float64()),
    _opt("rg", pa.float64()),
    _opt("pg", pa.float64()),
    _opt("mpg", pa.float64()),
)

RECORD_COUNTS = _schema(
    _req("source", pa.string()),
    _req("records_read", pa.int64()),
    _req("accepted", pa.int64()),
    _req("duplicates", pa.int64()),
    _req("quarantined", pa.int64()),
)

# One row per `mpg run`, whatever its outcome (`mpg.pipelines.runlog`); not partitioned by day.
RUNS = _schema(
    _req("run_id", pa.string()),
    _req("started_at", UTC_US),
    _opt("ended_at", UTC_US),
    _req("outcome", pa.string()),  # running, published, up-to-date, failed, interrupted
    _opt("message", pa.string()),  # why a run failed
    _req("traces", pa.string()),
    _req("input_files", pa.int64()),
    _req("input_bytes", pa.int64()),
    _req("inputs_fingerprint", pa.string()),  # names, sizes and modification times, hashed
    _req("code_version", pa.string()),
    _req("metric_versions", pa.list_(pa.string())),
    _opt("counts", pa.list_(pa.struct(list(RECORD_COUNTS)))),
    _opt("command", pa.string()),  # "run", or the backfill and its range
)

# What the expectation suites found (mpg/quality): one row per expectation and frame checked, or
# per expectation over all job buckets once combined. No run id or time: the same input gives the
# same bytes. `unexpected_count` is NULL where the expectation is about a column as a whole (its
# type), whose finding is `observed`; `unexpected_sample` is a JSON list of the first unexpected
# rows (index columns, then the checked ones).
VALIDATION_RESULTS = _schema(
    _req("suite", pa.string()),
    _req("suite_version", pa.string()),
    _req("target", pa.string()),
    _req("expectation", pa.string()),
    _opt("column", pa.string()),
    _req("kwargs", pa.string()),
    _req("severity", pa.string()),
    _req("description", pa.string()),
    _req("success", pa.bool_()),
    _req("element_count", pa.int64()),
    _opt("unexpected_count", pa.int64()),
    _opt("unexpected_sample", pa.string()),
    _opt("observed", pa.string()),
)

# What a snapshot remembers between runs, so that the next run ingests only new input
# (`mpg.pipelines.state`). Internal: not published as tables, and free to change with the code
# (a run of other code recomputes everything).
#
# One row per ingested input file, identified by its content hash.
MANIFEST = _schema(
    _req("source", pa.string()),
    _req("name", pa.string()),  # relative to the trace root, as in provenance
    _req("size", pa.int64()),
    _req("mtime_ns", pa.int64()),
    _req("sha256", pa.string()),
    _req("lines_read", pa.int64()),
    _req("quarantined", pa.int64()),  # at parsing
    _req("buckets", pa.list_(pa.int32())),  # the job buckets its records went to
)

# Per job bucket and source: how its records were disposed of after parsing; with the bucket's
# end of data and how many of its jobs are open (their chip-time runs to the end of data).
BUCKET_STATE = _schema(
    _req("bucket", pa.int32()),
    _req("source", pa.string()),
    _req("accepted", pa.int64()),
    _req("duplicates", pa.int64()),
    _req("quarantined", pa.int64()),
    _opt("data_end", UTC_US),
    _req("open_jobs", pa.int64()),
)

# Per job: whether it is open, and the days it occupies in the record store and in the job tables,
# so that recomputing a job rewrites exactly the day partitions it can change.
JOB_INDEX = _schema(
    _req("job_id", pa.string()),
    _req("open", pa.bool_()),
    _req("first_record_day", pa.date32()),
    _req("last_record_day", pa.date32()),
    _opt("first_output_day", pa.date32()),
    _opt("last_output_day", pa.date32()),
)

# The published tables, in the order they are created.
TABLES: dict[str, pa.Schema] = {
    "job_day_goodput": JOB_DAY_GOODPUT,
    "chip_time_ledger": CHIP_TIME_LEDGER,
    "goodput_by_slice": GOODPUT_BY_SLICE,
    "quarantine": QUARANTINE,
    "record_counts": RECORD_COUNTS,
}

# Each published table's key, which is also the order its rows are stored in (so that the same
# input gives the same bytes).
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "job_day_goodput": ("day", "job_id", "metric_version"),
    "chip_time_ledger": ("day", "job_id", "metric_version", "category"),
    "goodput_by_slice": ("day", "metric_version", "workload_class", "framework", "chip_generation"),
    "quarantine": ("source", "file", "line"),
    "record_counts": ("source",),
}

# A quarantine row decided after parsing (unknown job, conflicting lifecycle event), before its
# raw text is read back from the input file: raw text never travels through the shuffle.
QUARANTINE_REF = _schema(*[f for f in QUARANTINE if f.name != "raw"])


def concat(tables: Iterable[pa.Table], schema: pa.Schema) -> pa.Table:
    """Tables of one schema as one table; an empty table of `schema` when there are none."""
    tables = list(tables)
    return pa.concat_tables(tables) if tables else schema.empty_table()


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select and cast `table`'s columns to `schema` (order, types, metadata); extra columns go."""
    return table.select(schema.names).cast(schema)
