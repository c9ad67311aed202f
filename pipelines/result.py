"""What `mpg run` and `mpg backfill` report back: the summary of what they published."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from mpg.output.database import add_views, read_summary, view_tables
from mpg.output.snapshot import Snapshot
from mpg.output.store import DATABASE, OutputStore
from mpg.pipelines.analyst_objects import Kept
from mpg.pipelines.bigquery_target import BigQueryLoad
from mpg.schemas import DATA_FILES, RECORD_COUNTS


@dataclass(frozen=True)
class RunResult:
    run_id: str
    out: str  # the output folder's URI
    scorecard: pa.Table  # sql/report/run_summary.sql: the last 7 days published, worst first
    days: pa.Table  # sql/report/headline.sql: the fleet and each generation per day
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
    # The analyst's own tables and views, carried into the new mpg.duckdb.
    analyst: Kept = field(default_factory=Kept)

    @property
    def up_to_date(self) -> bool:
        return self.plan == "up to date"

    @property
    def database(self) -> str:
        """Where to query: the local database file, or the folder (read with `mpg sql`)."""
        store = OutputStore(self.out)
        return self.out if store.remote else store.storage.full(DATABASE)

    @classmethod
    def nothing_new(
        cls,
        store: OutputStore,
        run_id: str,
        current: Snapshot | None,
        files: int,
        skipped: list[str],
    ) -> RunResult:
        """A run with nothing to do: the summary is the current snapshot's."""
        scorecard, days, counts = snapshot_summary(store, current)
        return cls(run_id, store.uri, scorecard, days, counts, files, skipped, plan="up to date")


def snapshot_summary(
    store: OutputStore, snapshot: Snapshot | None
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The summary of a published snapshot, read from its data files (the database file may be
    held locked by an analyst's read-write session)."""
    if snapshot is None:
        return pa.table({}), pa.table({}), RECORD_COUNTS.empty_table()
    files = store.read_parquet(snapshot.state["files"], DATA_FILES)
    with duckdb.connect(config={"threads": 1}) as con:  # sums in one order, as publishing's
        view_tables(con, store, files)
        add_views(con, snapshot.key.current_metric_version)
        return read_summary(con)
