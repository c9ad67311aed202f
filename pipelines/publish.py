"""Build a run's `mpg.duckdb` from its staged Parquet, ready for `OutputLayout.commit`.

The database is a new file in the staging folder, never the published one opened for writing:
DuckDB locks a file while a writer has it open, and analysts keep theirs open. Table DDL comes
from `mpg.schemas`; rows go in ordered by each table's key, so the same input always gives the
same tables. The output expectation suites (`mpg.quality`) run on the staged database, and their
results, with the source suites', are stored beside the tables. The run's `runs` table (the run
log as of this run) is written last.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp

from mpg.errors import StoreError
from mpg.metrics import METRIC_VERSIONS
from mpg.pipelines.bigquery_target import BigQueryLoad
from mpg.pipelines.io import read_parquet, write_by_day, write_parquet
from mpg.pipelines.layout import DATABASE, REPORT, SOURCE_RESULTS
from mpg.pipelines.views import create_views
from mpg.quality import render_report, validate_outputs
from mpg.schemas import RUNS, TABLE_KEYS, TABLES, VALIDATION_RESULTS, concat, conform
from mpg.schemas.ddl import create_table_sql
from mpg.sqlfiles import load_sql, render_sql


@dataclass(frozen=True)
class PublishedRun:
    run_id: str
    database: Path
    headline: pa.Table  # sql/report/headline.sql
    counts: pa.Table  # RECORD_COUNTS
    files: int
    skipped: list[str]
    expectations: int = 0  # checked by the quality suites
    warnings: int = 0  # of them, failed with severity warn (a failed "fail" stops the run)
    plan: str = ""  # what the run did, in words ("up to date", "2 new ... trace files", ...)
    parsed: int = 0  # trace files parsed by this run
    retracted: int = 0  # files ingested before that changed or disappeared
    changed_days: list[tuple[str, str]] = field(default_factory=list)  # (job table, day)
    bigquery: BigQueryLoad | None = None  # what was loaded, with --publish bigquery

    @property
    def up_to_date(self) -> bool:
        return self.plan == "up to date"


def _parquet_files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*.parquet")) if folder.is_dir() else []


def _load(con: duckdb.DuckDBPyConnection, table: str, folder: Path) -> None:
    files = _parquet_files(folder)
    if not files:
        return
    try:
        rows = con.from_parquet(files).select(*[f'"{c}"' for c in TABLES[table].names])
        rows.order(", ".join(f'"{c}"' for c in TABLE_KEYS[table])).insert_into(table)
    except duckdb.InvalidInputException as exc:
        raise StoreError(f"a staged Parquet file of {table} cannot be read: {exc}") from exc


# The oldest DuckDB that can open `mpg.duckdb`: analysts' CLIs and BI tools lag the library.
READABLE_BY = "v1.0.0"


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the new database; DuckDB's I/O errors (a full disk) name the file."""
    try:
        with duckdb.connect(
            str(path), config={"storage_compatibility_version": READABLE_BY}
        ) as con:
            # One thread: floating-point sums (the slices) then add up in one order, so the same
            # input gives the same bits on every run. The tables here are small (job-days).
            con.execute("SET threads = 1")
            yield con
    except duckdb.IOException as exc:
        raise StoreError(f"cannot write {path}: {exc}") from exc


def current_view_statements(
    version: str, dialect: str, table: Callable[[str], exp.Table] = exp.to_table
) -> list[str]:
    """One `<table>_current` view per metric-versioned table (sql/publish/current_views.sql),
    for `dialect`, with tables named by `table`.

    `version` goes into the view as a literal (no engine binds a parameter in a view), placed
    by sqlglot in the parsed statement, never by formatting text; and it must be a name of
    METRIC_VERSIONS (code, not input): anything else is a bug in the caller.
    """
    if version not in METRIC_VERSIONS:
        raise ValueError(f"not a metric version: {version!r}")
    return [
        render_sql(
            "publish/current_views.sql",
            dialect,
            tables={
                "versioned_table": table(name),
                "versioned_table_current": table(f"{name}_current"),
            },
            literals={"current_version": version},
        )
        for name, schema in TABLES.items()
        if "metric_version" in schema.names
    ]


def build_database(staging: Path, current_version: str) -> Path:
    """`staging/mpg.duckdb` with every published table, the `*_current` views showing
    `current_version`'s rows, the analysts' views over them (`mpg.pipelines.views`), and the
    slices as Parquet beside it."""
    path = staging / DATABASE
    tables = staging / "tables"
    with _writing(path) as con:
        for name, schema in TABLES.items():
            con.execute(create_table_sql(name, schema))
        for name in ("job_day_goodput", "chip_time_ledger", "quarantine", "record_counts"):
            _load(con, name, tables / name)
        con.execute(load_sql("publish/macros.sql"))
        con.sql(load_sql("publish/goodput_by_slice.sql")).insert_into("goodput_by_slice")
        slices = conform(con.table("goodput_by_slice").to_arrow_table(), TABLES["goodput_by_slice"])
        for statement in current_view_statements(current_version, "duckdb"):
            con.execute(statement)
        create_views(con)
    write_by_day(slices, "day", tables / "goodput_by_slice", "part-0.parquet")
    return path


def _observed_counts(staging: Path, counted: pa.Table) -> pa.Table:
    """The run's counts as its outputs show them: accepted is what the record store holds (from
    the Parquet footers), so a record counted but never written shows up as a difference."""
    stored: Counter[str] = Counter()
    for path in (staging / "records").glob("source=*/day=*/bucket=*/*.parquet"):
        stored[path.parents[2].name.removeprefix("source=")] += pq.read_metadata(path).num_rows
    accepted = pa.array([stored[s] for s in counted.column("source").to_pylist()], pa.int64())
    return counted.set_column(counted.schema.get_field_index("accepted"), "accepted", accepted)


def validate_database(staging: Path) -> pa.Table:
    """Run the output suites on the staged database and store every result beside the tables.

    The source suites' results (combined over buckets by the account pipeline) and the output
    suites' go into the `validation_results` table, `tables/validation_results/` and the readable
    `validation_report.md`; the caller decides whether a failure stops the run.
    """
    database = staging / DATABASE
    sources = staging / SOURCE_RESULTS
    parts = [read_parquet(sources, VALIDATION_RESULTS)] if sources.exists() else []
    with _writing(database) as con:
        counted = con.table("record_counts").to_arrow_table()
        parts.append(validate_outputs(con, _observed_counts(staging, counted)))
        results = concat(parts, VALIDATION_RESULTS)
        con.execute(create_table_sql("validation_results", VALIDATION_RESULTS))
        con.from_arrow(results).insert_into("validation_results")
    write_parquet(results, staging / "tables" / "validation_results" / "part-0.parquet")
    (staging / REPORT).write_text(render_report(results))
    return results


def write_runs(database: Path, runs: pa.Table) -> None:
    """The `runs` table, written last: it records this run as published, with its counts."""
    with _writing(database) as con:
        con.execute(create_table_sql("runs", RUNS))
        con.from_arrow(runs).insert_into("runs")


def read_headline(database: Path) -> tuple[pa.Table, pa.Table]:
    """The headline (fleet and per-generation ratios per day) and the record counts."""
    with duckdb.connect(str(database), read_only=True) as con:
        return _headline(con)


def read_published_headline(snapshot: Path) -> tuple[pa.Table, pa.Table]:
    """The same from a published snapshot's Parquet, not its database file, which an analyst's
    read-write `duckdb` session may hold locked against every other process."""
    tables = snapshot / "tables"
    with duckdb.connect() as con:
        for name in ("goodput_by_slice", "record_counts"):
            files = _parquet_files(tables / name)
            rows = con.from_parquet(files) if files else con.from_arrow(TABLES[name].empty_table())
            rows.create_view(name)
        return _headline(con)


def _headline(con: duckdb.DuckDBPyConnection) -> tuple[pa.Table, pa.Table]:
    headline = con.sql(load_sql("report/headline.sql")).to_arrow_table()
    return headline, con.table("record_counts").order("source").to_arrow_table()
