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
    _opt("owner", pa.string()),  # the user
    _opt("team", pa.string()),  # who pays: a Slurm account, a namespace, a virtual cluster
    _opt("queue", pa.string()),  # where it waited: a Slurm partition, a Kueue LocalQueue
    _opt("topology", pa.string()),
    # An extension of the spec (docs/trace-format.md): what an adapter read the allocations from.
    _opt("allocated_from", pa.string()),
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
    # Optional, on `step` spans: which process (rank) of a multi-process job reported the span.
    # Several ranks' spans of one step are one step, from the earliest start to the latest end.
    _opt("rank", pa.int64()),
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

# The trace format's fields per source, in the spec's order: each record schema but its
# provenance. The one list of them: the parse SQL's field lists (`mpg.transforms.parse_sql`), the
# adapters' writer (`mpg.adapters.canonical`) and the simulator's encoder are made from it.
TRACE_FIELDS: dict[str, tuple[str, ...]] = {
    source: tuple(n for n in schema.names if n not in {f.name for f in PROVENANCE})
    for source, schema in RECORD_SCHEMAS.items()
}
# The fields that hold an instant (RFC 3339 strings in a trace, UTC_US in a record).
TIME_FIELDS = frozenset(
    f.name for schema in RECORD_SCHEMAS.values() for f in schema if f.type == UTC_US
)

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
    # The job a record was refused for after parsing (unknown job, conflicting lifecycle event);
    # NULL for a record the parser refused (it is nobody's until it parses).
    _opt("job_id", pa.string()),
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
    # The job's JOB_SUBMIT names them, or not (NULL: the input named none). Last, so that a table
    # published before they existed gains them at its end (Iceberg, BigQuery) and has the same
    # columns in the same order as one made new.
    _opt("owner", pa.string()),
    _opt("team", pa.string()),
    _opt("queue", pa.string()),
    _opt("allocated_from", pa.string()),  # what the import read its allocations from, or NULL
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

# One row per `mpg run`, whatever its outcome (`mpg.output.runlog`); not partitioned by day.
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
# (`mpg.output.manifest`; the files: `mpg.output.store.STATE_FILES`). Internal: not
# published as tables, and free to change with the code (a run of other code recomputes
# everything).
#
# One row per ingested input file. A file is known by its name, size and modification time
# (what a listing of any store gives); its SHA-256 is computed by the worker that parses it.
MANIFEST = _schema(
    _req("source", pa.string()),
    _req("name", pa.string()),  # relative to the trace root, as in provenance
    _req("size", pa.int64()),
    _req("mtime_ns", pa.int64()),
    _req("sha256", pa.string()),
    _req("lines_read", pa.int64()),
    _req("quarantined", pa.int64()),  # at parsing
)

# The job hash: CRC-32 of the job id's UTF-8 bytes. Job buckets are ranges of it, and the record
# store is sorted by it, so a bucket's jobs are one contiguous run of every stored file.
JOB_HASH = _req("job_hash", pa.int64())

# One row per job id the record store holds (jobs without a valid JOB_SUBMIT included): where
# its parsed records are, how they were disposed of, and what it published. Sorted by job_hash.
_COUNTED = ("rows", "accepted", "duplicates", "quarantined")
# JOB_INDEX columns that say where a job is stored and what it published, not what it holds.
_PLACED = ("job_hash", "segment", "first_output_day", "last_output_day")
JOB_INDEX = _schema(
    JOB_HASH,
    _req("job_id", pa.string()),
    _req("segment", pa.string()),  # the record-store segment holding every parsed record
    *[_req(f"{what}_{source}", pa.int64()) for what in _COUNTED for source in SOURCES],
    _req("submitted", pa.bool_()),  # has an accepted JOB_SUBMIT
    _req("open", pa.bool_()),  # submitted, and no accepted JOB_END: wanted to the end of data
    _opt("data_end", UTC_US),  # latest accepted scheduler ts or span end of the job
    _opt("first_output_day", pa.date32()),
    _opt("last_output_day", pa.date32()),
)

# What reconciling decided per job id (`mpg.transforms.reconcile.reconcile_jobs`): the part of
# JOB_INDEX that does not depend on where records are stored or what was published.
JOB_COUNTS = _schema(*[f for f in JOB_INDEX if f.name not in _PLACED])

# One row per segment file of the record store: its parsed rows when written (the live ones are
# counted in JOB_INDEX; a segment mostly dead is compacted).
SEGMENTS = _schema(
    _req("segment", pa.string()),
    _req("source", pa.string()),
    _req("path", pa.string()),
    _req("rows", pa.int64()),
)

# One row per data file of a published table in a snapshot (`day` NULL for unpartitioned tables).
DATA_FILES = _schema(
    _req("table", pa.string()),
    _opt("day", pa.date32()),
    _req("path", pa.string()),
    _req("rows", pa.int64()),
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

# What MPG alone does not show (issue 15): the ledger in dollars and kWh, checkpoint advice, step
# times. Declared here, published once the pipeline writes them (ANALYSIS_TABLES).
#
# The price and power each chip generation is costed at: the cost catalog's defaults
# (mpg/definitions/costs.v1.json) with DIR/mpg.toml's [prices], [power] and [energy] over them
# (`mpg.definitions.costs.cost_rates`). One row per generation; null where no figure is known.
COST_RATES = _schema(
    _req("chip_generation", pa.string()),
    _opt("usd_per_chip_hour", pa.float64()),
    _opt("price_source", pa.string()),
    _opt("watts_per_chip", pa.float64()),
    _opt("power_source", pa.string()),
    _req("pue", pa.float64()),
    _req("pue_source", pa.string()),
)

# The ledger in dollars and kWh (sql/publish/chip_time_cost.sql): one row per ledger row, with the
# rates it was costed at beside it. usd and kwh are null where the generation has no price or
# power; kWh are estimated from board power (TDP), never measured.
CHIP_TIME_COST = _schema(
    _req("day", pa.date32()),
    _req("job_id", pa.string()),
    _req("metric_version", pa.string()),
    _req("category", pa.string()),
    _req("chip_generation", pa.string()),
    _req("chip_s", pa.float64()),
    _opt("usd", pa.float64()),
    _opt("kwh", pa.float64()),
    _opt("usd_per_chip_hour", pa.float64()),
    _opt("price_source", pa.string()),
    _opt("watts_per_chip", pa.float64()),
    _opt("power_source", pa.string()),
    _req("pue", pa.float64()),
)

# Young/Daly checkpoint advice per training job, over the job's records in the run
# (`mpg.transforms.checkpoints`, docs/metrics.md "Checkpoint advice"). Durations (*_s) are the job's
# seconds, chip-time (*_chip_s) chip-seconds; the sums beside each mean let slices be ratios of
# sums. Chip-time only: a saving's dollars are the semantic layer's (chip-hours x cost_rates).
CHECKPOINT_ADVICE = _schema(
    # The job's last day (`last_day`): the day partition its advice is stored in, replaced
    # whenever the job is accounted again, as its job-day rows are.
    _req("day", pa.date32()),
    _req("job_id", pa.string()),
    _req("workload_class", pa.string()),
    _req("framework", pa.string()),
    _req("chip_generation", pa.string()),
    _req("chips_requested", pa.int64()),
    _req("first_day", pa.date32()),
    _req("last_day", pa.date32()),
    _req("wanted_s", pa.float64()),
    _req("analysed_s", pa.float64()),  # the job's wanted time in the data the advice is over
    _req("all_allocated_s", pa.float64()),
    _req("running_s", pa.float64()),  # all-allocated time outside init, compile and restore
    _req("step_s", pa.float64()),  # all-allocated time under steps, kept or lost
    # each once, from the attempts and the scheduler's failures and preemptions
    _req("interruptions", pa.int64()),
    _req("interruptions_from_scheduler_only", pa.int64()),  # that no attempt boundary shows
    _opt("interruptions_per_hour", pa.float64()),
    _opt("mtbi_s", pa.float64()),
    _opt("mtbi_low_s", pa.float64()),  # MTBI's interval at `confidence` (exact Poisson)
    _opt("mtbi_high_s", pa.float64()),
    _req("confidence", pa.float64()),
    _req("saves", pa.int64()),
    _req("save_s", pa.float64()),
    _opt("mean_save_s", pa.float64()),
    _req("restarts", pa.int64()),
    _req("restart_s", pa.float64()),
    _opt("mean_restart_s", pa.float64()),
    _req("intervals", pa.int64()),
    _req("interval_s", pa.float64()),
    _req("interval_steps", pa.int64()),  # steps in those intervals
    _opt("mean_step_s", pa.float64()),  # wall time a step takes between saves
    _opt("observed_interval_s", pa.float64()),
    _opt("observed_interval_steps", pa.float64()),
    _opt("advised_interval_s", pa.float64()),
    _opt("advised_interval_low_s", pa.float64()),
    _opt("advised_interval_high_s", pa.float64()),
    _opt("advised_interval_steps", pa.int64()),  # the setting: steps between saves
    # change | keep | too_few_interruptions | no_interruptions | no_saves (append-only)
    _req("advice", pa.string()),
    _req("all_allocated_chip_s", pa.float64()),
    _req("productive_chip_s", pa.float64()),
    _req("lost_progress_chip_s", pa.float64()),
    _req("checkpoint_save_chip_s", pa.float64()),
    _opt("predicted_lost_chip_s", pa.float64()),
    _opt("predicted_save_chip_s", pa.float64()),
    _opt("predicted_productive_chip_s", pa.float64()),
    # the model's P(advised setting) - P(observed), at MTBI and at its interval's ends
    _opt("predicted_gain_chip_s", pa.float64()),
    _opt("predicted_gain_at_mtbi_low_chip_s", pa.float64()),
    _opt("predicted_gain_at_mtbi_high_chip_s", pa.float64()),
    _opt("advised_productive_chip_s", pa.float64()),  # = predicted where advice != change
    _opt("rg", pa.float64()),
    _opt("rg_predicted", pa.float64()),
    _opt("rg_advised", pa.float64()),
    _req("chip_hours_saved", pa.float64()),  # over analysed_s; 0 where advice != change
)

# The roll-up of CHECKPOINT_ADVICE per slice (sql/views/checkpoint_advice_by_slice.sql): every
# mean a ratio of sums, the advised interval Young/Daly's on the slice's means, savings a plain
# sum, per calendar day of the period analysed (the whole table's first to last day).
CHECKPOINT_ADVICE_BY_SLICE = _schema(
    _opt("workload_class", pa.string()),
    _opt("framework", pa.string()),
    _opt("chip_generation", pa.string()),
    _req("jobs", pa.int64()),
    _req("jobs_to_change", pa.int64()),
    _req("all_allocated_s", pa.float64()),
    _req("interruptions", pa.int64()),
    _opt("interruptions_per_hour", pa.float64()),
    _opt("mtbi_s", pa.float64()),
    _opt("mean_save_s", pa.float64()),
    _opt("mean_restart_s", pa.float64()),
    _opt("observed_interval_s", pa.float64()),
    _opt("advised_interval_s", pa.float64()),
    _opt("rg", pa.float64()),
    _opt("rg_predicted", pa.float64()),
    _opt("rg_advised", pa.float64()),
    _req("chip_hours_saved", pa.float64()),
    _req("days", pa.int64()),
    _req("chip_hours_saved_per_day", pa.float64()),
)

# Step times inside productive time, per job-day (`mpg.transforms.step_times`): kept steps only,
# a step's time from its earliest rank's start to its latest rank's end. Changes no ledger row.
STEP_TIME_STATS = _schema(
    _req("day", pa.date32()),
    _req("job_id", pa.string()),
    _req("chips_requested", pa.int64()),
    _req("steps", pa.int64()),
    _req("mean_step_s", pa.float64()),
    _req("median_step_s", pa.float64()),
    _req("p90_step_s", pa.float64()),
    _req("p99_step_s", pa.float64()),
    _req("max_step_s", pa.float64()),
    # ml-goodput-measurement's "ideal step time" (its baseline of a typical step; not the
    # ledger's ideal, which is the roofline's): renamed from ideal_step_s (issue 19)
    _opt("baseline_step_s", pa.float64()),
    _opt("step_time_deviation_s", pa.float64()),  # ml-goodput-measurement's step_time_deviation
    _req("slow_step_chip_s", pa.float64()),
    _req("productive_chip_s", pa.float64()),
    _opt("slow_step_share", pa.float64()),
    _req("ranks", pa.int64()),  # the most ranks any step reported (0: no step names its rank)
    _opt("straggler_rank", pa.int64()),
    _opt("straggler_share", pa.float64()),
)

# Per job-day and rank, over the steps several ranks reported: how often each rank was the slowest.
STEP_RANK_STRAGGLERS = _schema(
    _req("day", pa.date32()),
    _req("job_id", pa.string()),
    _req("rank", pa.int64()),
    _req("steps", pa.int64()),
    _req("slowest_steps", pa.int64()),
    _req("slowest_share", pa.float64()),
    _req("mean_step_s", pa.float64()),
)

# The tables above, with their keys (also their row order).
ANALYSIS_TABLES: dict[str, pa.Schema] = {
    "chip_time_cost": CHIP_TIME_COST,
    "checkpoint_advice": CHECKPOINT_ADVICE,
    "step_time_stats": STEP_TIME_STATS,
    "step_rank_stragglers": STEP_RANK_STRAGGLERS,
    "cost_rates": COST_RATES,
}
ANALYSIS_TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "chip_time_cost": ("day", "job_id", "metric_version", "category"),
    "checkpoint_advice": ("day", "job_id"),
    "step_time_stats": ("day", "job_id"),
    "step_rank_stragglers": ("day", "job_id", "rank"),
    "cost_rates": ("chip_generation",),
}
TABLE_KEYS.update(ANALYSIS_TABLE_KEYS)

# Every table a snapshot publishes (as Iceberg tables, in mpg.duckdb and to BigQuery): the
# spec's and mpg's own, and what the run found (its expectation results and the run log).
PUBLISHED: dict[str, pa.Schema] = {
    **TABLES,
    **ANALYSIS_TABLES,
    "validation_results": VALIDATION_RESULTS,
    "runs": RUNS,
}

# A quarantine row decided after parsing (unknown job, conflicting lifecycle event), before its
# raw text is read back from the input file: raw text never travels through the shuffle.
QUARANTINE_REF = _schema(*[f for f in QUARANTINE if f.name != "raw"])

# Parsed records as the record store keeps them: with their job hash, sorted by it.
STORED_SCHEMAS: dict[str, pa.Schema] = {
    source: _schema(JOB_HASH, *schema) for source, schema in RECORD_SCHEMAS.items()
}


def concat(tables: Iterable[pa.Table], schema: pa.Schema) -> pa.Table:
    """Tables of one schema (up to nullability and metadata) as one table of `schema`; an empty
    one when there are none."""
    tables = [t.cast(schema) for t in tables]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select and cast `table`'s columns to `schema` (order, types, metadata); extra columns go."""
    return table.select(schema.names).cast(schema)
