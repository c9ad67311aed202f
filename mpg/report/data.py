"""What the report shows, read from `DIR/mpg.duckdb` (read-only, `open_published`), for one metric
version.

Every query is a file under `sql/report/`, with the metric version and the period bound as
parameters. The goodput and ledger queries cover the report's period; the folder's own facts
(the run that published, what the data covers, its quality) cover everything published. A table
that the mpg which wrote the folder did not publish is found absent through the connection
(`published_tables.sql`), and its section says so instead of failing. Owners are not in the
published tables, so the worst jobs' owners come from their JOB_SUBMIT records in the record
store.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from mpg.compare.decompose import UndefinedMPGError
from mpg.compare.dollars import DollarPeriod, dollar_period
from mpg.compare.period import Period
from mpg.compare.read import read_period
from mpg.errors import UserError
from mpg.metrics import LEDGER_CATEGORIES
from mpg.published import open_published, reading
from mpg.report.theme import LOSSES
from mpg.sqlfiles import load_sql

WORST_JOBS = 15  # of the fleet
WORST_JOBS_PER_SLICE = 10
CHECKPOINT_JOBS = 15  # ranked by chip-hours saved a day
STEP_OUTLIERS = 15  # job-days ranked by slow-step share
STRAGGLER_JOB_DAYS = 6  # job-days whose ranks are shown

# The waterfall's steps down from wanted time: scheduling first (the chips never came), then the
# runtime's losses, ending at the productive time that PG then discounts.
WATERFALL_LOSSES: tuple[str, ...] = tuple(
    category for category in reversed(LEDGER_CATEGORIES) if category != "ideal"
)

# The folder's facts, each read only where the table it needs was published.
_FOLDER_QUERIES: dict[str, str] = {
    "published_run": "runs",
    "data_days": "job_day_goodput",
    "record_counts": "record_counts",
    "quarantine_reasons": "quarantine",
    "validation_summary": "validation_results",
    "validation_warnings": "validation_results",
    "checkpoint_slices": "checkpoint_advice_by_slice",
}

# The period's analyses (issue 15), each read only where its table was published.
_ANALYSIS_QUERIES: dict[str, tuple[str, dict]] = {
    "checkpoint_jobs": ("checkpoint_advice", {"limit": CHECKPOINT_JOBS}),
    "step_outliers": ("step_time_stats", {"limit": STEP_OUTLIERS}),
    "stragglers": ("step_rank_stragglers", {"limit": STRAGGLER_JOB_DAYS}),
}


class EmptyPeriodError(UserError):
    """The published tables have no row in the period asked for."""


@dataclass(frozen=True)
class ReportData:
    """The rows behind each chart (one frame per file of sql/report/), the period covered, the
    folder's facts (None where their table is not published) and the names of the published
    tables and views."""

    metric_version: str
    first: dt.date
    last: dt.date
    period_fleet: pl.DataFrame
    slice_days: pl.DataFrame
    size_class_days: pl.DataFrame
    ledger_days: pl.DataFrame
    ledger_waterfall: pl.DataFrame
    slice_ledger: pl.DataFrame
    worst_jobs: pl.DataFrame  # one row per job, a column per category of LOSSES
    dollars: DollarPeriod | None  # the period's dollars lost; None: `dollars_unavailable` says why
    dollars_unavailable: str | None
    checkpoint_jobs: pl.DataFrame | None
    checkpoint_slices: pl.DataFrame | None
    step_outliers: pl.DataFrame | None
    stragglers: pl.DataFrame | None
    published_run: pl.DataFrame | None
    data_days: pl.DataFrame | None
    record_counts: pl.DataFrame | None
    quarantine_reasons: pl.DataFrame | None
    validation_summary: pl.DataFrame | None
    validation_warnings: pl.DataFrame | None
    tables: frozenset[str]


def _frame(con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> pl.DataFrame:
    return pl.from_arrow(con.sql(load_sql(f"report/{name}.sql"), params=params).to_arrow_table())


def read_report_data(
    out: Path, metric_version: str, first: dt.date | None, last: dt.date | None
) -> ReportData:
    period = {"metric_version": metric_version, "first": first, "last": last}
    frames: dict[str, pl.DataFrame | None] = {}
    with open_published(out) as con:
        tables = frozenset(_frame(con, "published_tables")["table_name"].to_list())
        for name, params in [
            ("period_fleet", period),
            ("slice_days", period),
            ("size_class_days", period),
            ("ledger_days", period),
            ("ledger_waterfall", {**period, "losses": list(WATERFALL_LOSSES)}),
            ("slice_ledger", period),
            (
                "worst_jobs",
                {
                    **period,
                    "losses": list(LOSSES),
                    "fleet_limit": WORST_JOBS,
                    "slice_limit": WORST_JOBS_PER_SLICE,
                },
            ),
        ]:
            frames[name] = _frame(con, name, params)
        days = frames["slice_days"]["day"]
        if days.is_empty():
            raise EmptyPeriodError(
                f"no published goodput in {out} (metric version {metric_version}) "
                f"from {first or 'the start'} to {last or 'the end'}"
            )
        for name, (table, more) in _ANALYSIS_QUERIES.items():
            params = {**period, **more}
            if name != "step_outliers":
                params.pop("metric_version")
            frames[name] = _frame(con, name, params) if table in tables else None
        for name, table in _FOLDER_QUERIES.items():
            frames[name] = _frame(con, name) if table in tables else None
        dollars, unavailable = _period_dollars(con, Period(days.min(), days.max()), metric_version)
    frames["worst_jobs"] = _with_owners(out, _one_row_per_job(frames["worst_jobs"]))
    return ReportData(
        metric_version=metric_version,
        first=days.min(),
        last=days.max(),
        tables=tables,
        dollars=dollars,
        dollars_unavailable=unavailable,
        **frames,
    )


def _period_dollars(
    con: duckdb.DuckDBPyConnection, period: Period, metric_version: str
) -> tuple[DollarPeriod | None, str | None]:
    """The period's dollars lost as `mpg compare` counts them, or None and why not."""
    try:
        return dollar_period(read_period(con, period, metric_version), "report's"), None
    except UndefinedMPGError as exc:
        return None, f"counting only chip-time whose generation has a price, {exc}"


def _one_row_per_job(rows: pl.DataFrame) -> pl.DataFrame:
    """worst_jobs.sql's rows (one per job and category) as one row per job with a column of
    chip-hours per category of LOSSES (0 where the job lost none of it), in fleet rank order."""
    jobs = rows.drop("category", "chip_h").unique("job_id", maintain_order=True)
    lost = rows.filter(pl.col("category").is_not_null())
    if lost.is_empty():
        wide = jobs.select("job_id")
    else:
        wide = lost.pivot(on="category", index="job_id", values="chip_h", aggregate_function="sum")
    wide = wide.with_columns(
        pl.lit(0.0).alias(c) for c in LOSSES if c not in wide.columns
    ).with_columns(pl.col(c).fill_null(0.0) for c in LOSSES)
    return jobs.join(wide.select("job_id", *LOSSES), on="job_id", how="left").sort("fleet_rank")


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
