"""What the report plots, read from `DIR/mpg.duckdb` (read-only), for one metric version.

Every query is a file under `sql/report/` with the metric version and the period bound as
parameters. Owners are not in the published tables, so the worst jobs' owners come from their
JOB_SUBMIT records in the record store.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from mpg.errors import UserError
from mpg.metrics import LEDGER_CATEGORIES
from mpg.published import open_published, reading
from mpg.sqlfiles import load_sql

WORST_JOBS = 15

# The waterfall's steps down from wanted time: scheduling first (the chips never came), then the
# runtime's losses, ending at the productive time that PG then discounts.
WATERFALL_LOSSES: tuple[str, ...] = tuple(
    category for category in reversed(LEDGER_CATEGORIES) if category != "ideal"
)


class EmptyPeriodError(UserError):
    """The published tables have no row in the period asked for."""


@dataclass(frozen=True)
class ReportData:
    """The rows behind each chart (one frame per file of sql/report/), and the period covered."""

    metric_version: str
    first: dt.date
    last: dt.date
    period_fleet: pl.DataFrame
    slice_days: pl.DataFrame
    size_class_days: pl.DataFrame
    ledger_days: pl.DataFrame
    ledger_waterfall: pl.DataFrame
    worst_jobs: pl.DataFrame


def read_report_data(
    out: Path, metric_version: str, first: dt.date | None, last: dt.date | None
) -> ReportData:
    period = {"metric_version": metric_version, "first": first, "last": last}
    frames = {}
    with open_published(out) as con:
        for name, params in [
            ("period_fleet", period),
            ("slice_days", period),
            ("size_class_days", period),
            ("ledger_days", period),
            ("ledger_waterfall", {**period, "losses": list(WATERFALL_LOSSES)}),
            ("worst_jobs", {**period, "limit": WORST_JOBS}),
        ]:
            frames[name] = pl.from_arrow(
                con.sql(load_sql(f"report/{name}.sql"), params=params).to_arrow_table()
            )
    days = frames["slice_days"]["day"]
    if days.is_empty():
        raise EmptyPeriodError(
            f"no published goodput in {out} (metric version {metric_version}) "
            f"from {first or 'the start'} to {last or 'the end'}"
        )
    frames["worst_jobs"] = _with_owners(out, frames["worst_jobs"])
    return ReportData(metric_version=metric_version, first=days.min(), last=days.max(), **frames)


def _with_owners(out: str | Path, jobs: pl.DataFrame) -> pl.DataFrame:
    """`jobs` with an `owner` column (null where their JOB_SUBMIT names none), from the records
    the run accepted (`mpg.pipelines.lookup`)."""
    from mpg.pipelines.lookup import accepted_records
    from mpg.pipelines.snapshot import read_current
    from mpg.pipelines.store import OutputStore

    owners = pl.DataFrame(schema={"job_id": pl.String, "owner": pl.String})
    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    if snapshot is not None and not jobs.is_empty():
        records = accepted_records(store, snapshot, jobs["job_id"].to_list())
        with reading(store.uri), duckdb.connect() as con:
            con.register("scheduler_records", records.scheduler)
            found = con.sql(load_sql("report/job_owners.sql")).to_arrow_table()
        owners = pl.from_arrow(found)
    return jobs.join(owners, on="job_id", how="left", maintain_order="left")
