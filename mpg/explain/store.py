"""Reading back what `mpg run --out DIR` left: the published tables and the record store.

Figures come from the published tables (`mpg.output.published.open_published`), because those are
the numbers people quote; the job's records come from the record store, to show where the figures
came from: found through the snapshot's job index and reconciled as the run reconciled them
(`mpg.output.lookup`). Every query is a file under `sql/explain/` with its values bound.

The end of data (where an open job stops wanting chips) is global to the run: the job index
keeps each job's latest instant, and the job that reaches the end of data is read to name the
record that sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.core.errors import StoreError, UserError
from mpg.explain.model import Record, from_epoch_us
from mpg.output.lookup import accepted_records, end_of_data
from mpg.output.pointer import NoPublishedTablesError
from mpg.output.published import open_published, published_location
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.sql.files import load_sql


class UnknownJobError(UserError):
    """The job has no row in the published tables (for the metric version asked for)."""


@dataclass(frozen=True)
class PublishedJob:
    """The job's published rows: `goodput` (sql/explain/job_goodput.sql) and `ledger`
    (sql/explain/job_ledger.sql), a row with a null day standing for all the job's days; its
    checkpoint advice (zero or one row) and step times per day."""

    database: str
    goodput: pl.DataFrame
    ledger: pl.DataFrame
    checkpoint_advice: pl.DataFrame
    step_times: pl.DataFrame


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


def read_published(out: str | Path, job_id: str, metric_version: str) -> PublishedJob:
    database = published_location(out)
    params = {"job_id": job_id, "metric_version": metric_version}
    with open_published(out) as con:
        goodput = con.sql(load_sql("explain/job_goodput.sql"), params=params).to_arrow_table()
        ledger = con.sql(load_sql("explain/job_ledger.sql"), params=params).to_arrow_table()
        advice, steps = (
            con.sql(load_sql(f"explain/{name}.sql"), params={"job_id": job_id}).to_arrow_table()
            for name in ("job_checkpoint_advice", "job_step_times")
        )
    if goodput.num_rows == 0:
        raise UnknownJobError(
            f"job {job_id!r} has no rows in {database} (metric version {metric_version})"
        )
    return PublishedJob(
        database=database,
        goodput=pl.from_arrow(goodput),
        ledger=pl.from_arrow(ledger),
        checkpoint_advice=pl.from_arrow(advice),
        step_times=pl.from_arrow(steps),
    )


def _latest_record(records: pa.Table, column: str, instant_us: int) -> tuple[str, int] | None:
    """(file, line) of the first record (by file, line) whose `column` is `instant_us`."""
    hits = records.filter(pc.equal(records.column(column).cast(pa.int64()), instant_us))
    if not hits.num_rows:
        return None
    first = hits.sort_by([("file", "ascending"), ("line", "ascending")]).slice(0, 1).to_pylist()[0]
    return first["file"], first["line"]


def read_stored_job(out: str | Path, job_id: str) -> StoredJob:
    """The job's accepted records from the record store, and the run's end of data."""
    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    if snapshot is None:
        raise NoPublishedTablesError(out)
    records = accepted_records(store, snapshot, [job_id])
    latest_us, latest_job = end_of_data(store, snapshot)
    if latest_us is None or latest_job is None:
        raise StoreError(f"the record store of {out} holds no scheduler event or span")
    holder = records if latest_job == job_id else accepted_records(store, snapshot, [latest_job])
    found = _latest_record(holder.scheduler, "ts", latest_us) or _latest_record(
        holder.runtime, "end", latest_us
    )
    file, line = found if found else ("", 0)
    return StoredJob(
        scheduler=records.scheduler,
        runtime=records.runtime,
        profiles=records.profiles,
        data_end=Record(instant=from_epoch_us(latest_us), file=file, line=line),
    )
