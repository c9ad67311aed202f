"""Reading back what `mpg run --out DIR` left: the published tables and the record store.

Figures come from `DIR/mpg.duckdb`, opened read-only, because those are the numbers people quote;
the job's records come from the record store `DIR/records`, to show where the figures came from.
Every query is a file under `sql/explain/` with its values bound as parameters.

The job's records are read from its bucket's files only (the run's bucket count is in its
state; a folder without state has every bucket's files read, DuckDB skipping the other jobs' row
groups on their statistics). The end of data (where an open job stops wanting chips) is global
to the run, so it takes a scan of the `ts` and `end` columns of the whole store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from mpg.errors import StoreError, UserError
from mpg.explain.model import Record, from_epoch_us
from mpg.pipelines.state import load_previous
from mpg.published import open_published, published_database, reading
from mpg.schemas import RECORD_SCHEMAS, conform
from mpg.sqlfiles import load_sql
from mpg.transforms.reconcile import bucket_of


class UnknownJobError(UserError):
    """The job has no row in the published tables (for the metric version asked for)."""


@dataclass(frozen=True)
class PublishedJob:
    """The job's published rows: `goodput` (sql/explain/job_goodput.sql) and `ledger`
    (sql/explain/job_ledger.sql), a row with a null day standing for all the job's days."""

    database: Path
    goodput: pl.DataFrame
    ledger: pl.DataFrame


@dataclass(frozen=True)
class StoredJob:
    """The job's accepted records (RECORD_SCHEMAS, with file and line) and the run's end of data."""

    scheduler: pa.Table
    runtime: pa.Table
    profiles: pa.Table
    data_end: Record

    @property
    def records(self) -> int:
        return self.scheduler.num_rows + self.runtime.num_rows + self.profiles.num_rows


def read_published(out: Path, job_id: str, metric_version: str) -> PublishedJob:
    database = published_database(out)
    params = {"job_id": job_id, "metric_version": metric_version}
    with open_published(out) as con:
        goodput = con.sql(load_sql("explain/job_goodput.sql"), params=params).to_arrow_table()
        ledger = con.sql(load_sql("explain/job_ledger.sql"), params=params).to_arrow_table()
    if goodput.num_rows == 0:
        raise UnknownJobError(
            f"job {job_id!r} has no rows in {database} (metric version {metric_version})"
        )
    return PublishedJob(
        database=database, goodput=pl.from_arrow(goodput), ledger=pl.from_arrow(ledger)
    )


def _store_files(out: Path, source: str, bucket: str = "*") -> list[str]:
    pattern = f"source={source}/day=*/bucket={bucket}/*.parquet"
    return sorted(str(p) for p in (out / "records").glob(pattern))


def _bucket(out: Path, job_id: str) -> str:
    """The job's bucket folder name, or "*" where the folder's state does not say."""
    previous = load_previous(out / ".mpg" / "current")
    if previous is None:
        return "*"
    return f"{bucket_of(pa.array([job_id]), previous.key.buckets)[0].as_py():04d}"


def _end_of_data(con: duckdb.DuckDBPyConnection, out: Path) -> Record:
    """The latest accepted scheduler `ts` or span `end` of the run, and the record holding it."""
    latest = []
    for source in ("scheduler", "runtime"):
        files = _store_files(out, source)
        if files:
            latest += con.execute(
                load_sql("explain/latest_record.sql"), {"files": files}
            ).fetchall()
    if not latest:
        raise StoreError(f"the record store {out / 'records'} holds no scheduler event or span")
    instant_us, file, line = min(latest, key=lambda r: (-r[0], r[1], r[2]))
    return Record(instant=from_epoch_us(instant_us), file=file, line=line)


def read_stored_job(out: Path, job_id: str) -> StoredJob:
    """The job's accepted records from its bucket's files, and the run's end of data."""
    tables = {}
    bucket = _bucket(out, job_id)
    with reading(out / "records"), duckdb.connect() as con:
        for source, schema in RECORD_SCHEMAS.items():
            files = _store_files(out, source, bucket)
            found = (
                con.sql(
                    load_sql("explain/job_records.sql"), params={"files": files, "job_id": job_id}
                ).to_arrow_table()
                if files
                else schema.empty_table()
            )
            tables[source] = conform(found, schema)
        data_end = _end_of_data(con, out)
    return StoredJob(**tables, data_end=data_end)
