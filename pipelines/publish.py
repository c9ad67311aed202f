"""Publish a finished run: build `mpg.duckdb` from the staged Parquet and swap it all into place.

The database is built as a new file in the staging folder and renamed over the old one
(`Path.replace`, atomic on one filesystem), so a reader never sees a half-built database, and a
reader holding the old file open keeps reading the old tables. (DuckDB locks a file while a writer
has it open; building a fresh file keeps the published one free for analysts.) Table DDL comes
from `mpg.schemas`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from mpg.pipelines.io import write_by_day
from mpg.schemas import TABLES, conform
from mpg.schemas.ddl import create_table_sql
from mpg.sqlfiles import load_sql

DATABASE = "mpg.duckdb"
# What a run publishes under its output folder, besides the database.
PUBLISHED_DIRS = ("records", "tables")


@dataclass(frozen=True)
class PublishedRun:
    out: Path
    database: Path
    headline: pa.Table  # sql/report/headline.sql
    counts: pa.Table  # RECORD_COUNTS
    files: int
    skipped: list[str]


def _parquet_files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*.parquet")) if folder.is_dir() else []


def _load(con: duckdb.DuckDBPyConnection, table: str, folder: Path) -> None:
    files = _parquet_files(folder)
    if files:
        con.from_parquet(files).select(*[f'"{c}"' for c in TABLES[table].names]).insert_into(table)


def _build_database(staging: Path) -> Path:
    path = staging / DATABASE
    tables = staging / "tables"
    with duckdb.connect(str(path)) as con:
        for name, schema in TABLES.items():
            con.execute(create_table_sql(name, schema))
        for name in ("job_day_goodput", "chip_time_ledger", "quarantine", "record_counts"):
            _load(con, name, tables / name)
        con.sql(load_sql("publish/goodput_by_slice.sql")).insert_into("goodput_by_slice")
        slices = conform(con.table("goodput_by_slice").to_arrow_table(), TABLES["goodput_by_slice"])
    write_by_day(slices, "day", tables / "goodput_by_slice", "part-0.parquet")
    return path


def _swap_into_place(staging: Path, out: Path) -> None:
    retired = staging / "retired"
    retired.mkdir()
    for name in PUBLISHED_DIRS:
        if (out / name).exists():
            (out / name).replace(retired / name)
        if (staging / name).exists():
            (staging / name).replace(out / name)
    (staging / DATABASE).replace(out / DATABASE)
    shutil.rmtree(retired)


def publish(staging: Path, out: Path, files: int, skipped: list[str]) -> PublishedRun:
    """Build the database from `staging`, move it and the Parquet into `out`, read the headline."""
    (staging / "tables").mkdir(parents=True, exist_ok=True)
    _build_database(staging)
    _swap_into_place(staging, out)
    database = out / DATABASE
    with duckdb.connect(str(database), read_only=True) as con:
        headline = con.sql(load_sql("report/headline.sql")).to_arrow_table()
        counts = con.table("record_counts").to_arrow_table()
    return PublishedRun(
        out=out, database=database, headline=headline, counts=counts, files=files, skipped=skipped
    )
