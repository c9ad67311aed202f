"""Build a run's `mpg.duckdb` from its staged Parquet, ready for `OutputLayout.commit`.

The database is a new file in the staging folder, never the published one opened for writing:
DuckDB locks a file while a writer has it open, and analysts keep theirs open. Table DDL comes
from `mpg.schemas`; rows go in ordered by each table's key, so the same input always gives the
same tables. The run's `runs` table (the run log as of this run) is written beside them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from mpg.errors import StoreError
from mpg.pipelines.io import write_by_day
from mpg.pipelines.layout import DATABASE
from mpg.schemas import RUNS, TABLE_KEYS, TABLES, conform
from mpg.schemas.ddl import create_table_sql
from mpg.sqlfiles import load_sql


@dataclass(frozen=True)
class PublishedRun:
    run_id: str
    database: Path
    headline: pa.Table  # sql/report/headline.sql
    counts: pa.Table  # RECORD_COUNTS
    files: int
    skipped: list[str]


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


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the new database; DuckDB's I/O errors (a full disk) name the file."""
    try:
        with duckdb.connect(str(path)) as con:
            # One thread: floating-point sums (the slices) then add up in one order, so the same
            # input gives the same bits on every run. The tables here are small (job-days).
            con.execute("SET threads = 1")
            yield con
    except duckdb.IOException as exc:
        raise StoreError(f"cannot write {path}: {exc}") from exc


def build_database(staging: Path) -> Path:
    """`staging/mpg.duckdb` with every published table, and the slices as Parquet beside it."""
    path = staging / DATABASE
    tables = staging / "tables"
    with _writing(path) as con:
        for name, schema in TABLES.items():
            con.execute(create_table_sql(name, schema))
        for name in ("job_day_goodput", "chip_time_ledger", "quarantine", "record_counts"):
            _load(con, name, tables / name)
        con.sql(load_sql("publish/goodput_by_slice.sql")).insert_into("goodput_by_slice")
        slices = conform(con.table("goodput_by_slice").to_arrow_table(), TABLES["goodput_by_slice"])
    write_by_day(slices, "day", tables / "goodput_by_slice", "part-0.parquet")
    return path


def write_runs(database: Path, runs: pa.Table) -> None:
    """The `runs` table, written last: it records this run as published, with its counts."""
    with _writing(database) as con:
        con.execute(create_table_sql("runs", RUNS))
        con.from_arrow(runs).insert_into("runs")


def read_headline(database: Path) -> tuple[pa.Table, pa.Table]:
    """The headline (fleet and per-generation ratios per day) and the record counts."""
    with duckdb.connect(str(database), read_only=True) as con:
        headline = con.sql(load_sql("report/headline.sql")).to_arrow_table()
        counts = con.table("record_counts").to_arrow_table()
    return headline, counts
