"""What the report shows, read from `DIR/mpg.duckdb` (read-only, `open_published`), for one metric
version.

Every query is a file under `sql/report/`, with the metric version and the period bound as
parameters, and every figure in it comes from the semantic layer's macros (sql/semantic/:
the period's roll-ups, the scorecard, the ranked jobs), so that the page, `mpg report --json`,
`mpg compare`, `mpg explain`, `mpg run`'s summary and the views give one number for one thing.
The goodput and ledger queries cover the report's period; the folder's own facts (the run that
published, what the data covers, its quality) cover everything published. A table that the mpg
which wrote the folder did not publish is found absent through the connection
(`published_tables.sql`), and its section says so instead of failing. The worst jobs' owners,
teams and queues are the published job_day_goodput's (the layer carries them); the fix list's
scheduling evidence comes from the jobs' JOB_SUBMIT and task records in the record store.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from mpg.core.errors import UserError
from mpg.definitions.metrics import LEDGER_CATEGORIES
from mpg.output.lookup import accepted_records
from mpg.output.published import open_published, reading
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.schemas import SCHEDULER_EVENTS
from mpg.sql.files import load_sql

WORST_JOBS = 15  # of the fleet
WORST_JOBS_PER_SLICE = 10
FIX_LIST = 10  # the jobs that lost most, each with one action
CHECKPOINT_JOBS = 15  # ranked by chip-hours saved a day
STEP_OUTLIERS = 15  # job-days ranked by slow-step share
MIN_STEPS = 100  # kept steps a job-day needs to be ranked by its step times
STRAGGLER_JOB_DAYS = 6  # job-days whose ranks are shown
COVERAGE_DROP = 0.1  # a day's PG coverage this far below the day before's is flagged

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
    "step_outliers": ("step_time_stats", {"limit": STEP_OUTLIERS, "min_steps": MIN_STEPS}),
    "stragglers": ("step_rank_stragglers", {"limit": STRAGGLER_JOB_DAYS}),
}


class EmptyPeriodError(UserError):
    """The published tables have no row in the period asked for."""


@dataclass(frozen=True)
class ReportData:
    """The rows behind each chart, table and figure (one frame per file of sql/report/), the
    period covered, the folder's facts (None where their table is not published) and the names
    of the published tables and views."""

    metric_version: str
    first: dt.date
    last: dt.date
    slices: pl.DataFrame  # period_rollup.sql: the fleet and each slice over the period
    scorecard: pl.DataFrame  # scorecard.sql: the same, worst first, beside the previous period
    slice_days: pl.DataFrame
    size_class_days: pl.DataFrame
    ledger_days: pl.DataFrame
    ledger_waterfall: pl.DataFrame
    slice_ledger: pl.DataFrame
    categories: pl.DataFrame  # period_categories.sql
    worst_jobs: pl.DataFrame  # worst_jobs.sql: with each job's owner, team and queue
    teams: pl.DataFrame  # teams.sql: each team and queue, worst first, against the period before
    queue_waiting: pl.DataFrame  # queue_waiting.sql
    fix_list: pl.DataFrame  # fix_list.sql
    coverage_drops: pl.DataFrame
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

    @property
    def fleet(self) -> dict[str, Any]:
        """The fleet's row of the period (period_rollup.sql)."""
        return self.slices.filter(pl.col("slice_kind") == "fleet").row(0, named=True)

    def unpriced_generations(self) -> list[tuple[str, float]]:
        """The chip generations with chip-time but no price, and their chip-seconds, most
        first."""
        rows = self.slices.filter(
            (pl.col("slice_kind") == "chip_generation") & (pl.col("unpriced_chip_s") > 0)
        ).sort(["unpriced_chip_s", "slice"], descending=[True, False])
        return list(zip(rows["slice"].to_list(), rows["unpriced_chip_s"].to_list(), strict=True))


def _frame(con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> pl.DataFrame:
    return pl.from_arrow(con.sql(load_sql(f"report/{name}.sql"), params=params).to_arrow_table())


def _period(
    con: duckdb.DuckDBPyConnection, out: Path, version: str, first: dt.date | None,
    last: dt.date | None,
) -> tuple[dt.date, dt.date]:  # fmt: skip
    """The days of the period asked for that have published rows: the report's period."""
    days = _frame(
        con, "period_days", {"metric_version": version, "first": first, "last": last}
    ).row(0, named=True)
    if days["first_day"] is None:
        raise EmptyPeriodError(
            f"no published goodput in {out} (metric version {version}) "
            f"from {first or 'the start'} to {last or 'the end'}"
        )
    return days["first_day"], days["last_day"]


def read_report_data(
    out: Path, metric_version: str, first: dt.date | None, last: dt.date | None
) -> ReportData:
    frames: dict[str, pl.DataFrame | None] = {}
    with open_published(out) as con:
        tables = frozenset(_frame(con, "published_tables")["table_name"].to_list())
        first, last = _period(con, out, metric_version, first, last)
        period = {"metric_version": metric_version, "first": first, "last": last}
        for name, params in [
            ("slices", period),
            ("scorecard", period),
            ("slice_days", period),
            ("size_class_days", period),
            ("ledger_days", period),
            ("ledger_waterfall", {**period, "losses": list(WATERFALL_LOSSES)}),
            ("slice_ledger", period),
            ("categories", period),
            ("coverage_drops", {**period, "drop": COVERAGE_DROP}),
            ("teams", period),
            ("queue_waiting", period),
            (
                "worst_jobs",
                {**period, "fleet_limit": WORST_JOBS, "slice_limit": WORST_JOBS_PER_SLICE},
            ),
        ]:
            frames[name] = _frame(con, _FILES.get(name, name), params)
        for name, (table, more) in _ANALYSIS_QUERIES.items():
            params = {**period, **more}
            if name != "step_outliers":
                params.pop("metric_version")
            frames[name] = _frame(con, name, params) if table in tables else None
        for name, table in _FOLDER_QUERIES.items():
            frames[name] = _frame(con, name) if table in tables else None
        jobs = frames["worst_jobs"]
        assert jobs is not None
        scheduler = _scheduler_records(out, jobs["job_id"].to_list())
        con.register("scheduler_records", scheduler)
        frames["fix_list"] = _frame(con, "fix_list", {**period, "limit": FIX_LIST})
        con.unregister("scheduler_records")
    return ReportData(
        metric_version=metric_version, first=first, last=last, tables=tables, **frames
    )


# Frames read from a file of another name.
_FILES = {"slices": "period_rollup", "categories": "period_categories"}


def _scheduler_records(out: str | Path, job_ids: list[str]) -> pa.Table:
    """The accepted scheduler events of some jobs, from the records the run accepted
    (`mpg.output.lookup`); none where the folder has no record store (tables written by
    hand, tests/support/handmade.py)."""
    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    if snapshot is None or "jobs" not in snapshot.state or not job_ids:
        return SCHEDULER_EVENTS.empty_table()
    with reading(store.uri):
        return accepted_records(store, snapshot, job_ids).scheduler
