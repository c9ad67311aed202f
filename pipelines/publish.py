"""Publishing a staged snapshot: check it, commit its tables, switch to it at one instant.

    with database_ahead(run, current_metric_version) as database:
        ...  # the pipeline, beside the database being made
        published = publish(staged, over, record, Destinations(...), database)

1. The snapshot's tables go into a new DuckDB file (the database a local folder publishes; for
   object storage, a temporary one), made with its views while the pipeline ran, and the
   output expectation suites run on it: a failed fail-severity expectation stops here,
   nothing published, the report kept in the run log.
2. The results and the run log become tables too; with `--publish bigquery`, the changed
   partitions are loaded there (a failed load fails the run, whose rerun loads again).
3. Each changed table is committed as an Iceberg snapshot (the staged ones in a thread while
   1. runs, the run's own two after it), the state files are written, and `current.json` is
   replaced on the condition that it still names the snapshot the run started from: that is
   the switch. A local folder's `mpg.duckdb` and report follow.
4. Whatever no kept snapshot (this one and the one before) references is removed.
"""

from __future__ import annotations

import contextlib
import datetime
import tempfile
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mpg.cli import progress
from mpg.output import runlog
from mpg.output.database import fill_tables, new_database, read_summary, table_files, writes
from mpg.output.snapshot import Snapshot, switch
from mpg.output.store import DATABASE, REPORT, OutputStore, RunFiles
from mpg.pipelines.analyst_objects import Kept, keep_analyst_objects
from mpg.pipelines.bigquery_target import BigQueryLoad, BigQueryTarget
from mpg.pipelines.finish import Staged, TableChange, data_files_after
from mpg.quality import fatal_failures, raise_for_failures, render_report, validate_outputs
from mpg.quality.engine import engine_named
from mpg.schemas import DATA_FILES, PUBLISHED, RUNS, VALIDATION_RESULTS, concat
from mpg.storage.lock import Lease

# The tables publishing writes itself, after the checks: their results, and the run log.
_WRITTEN_HERE = ("validation_results", "runs")
# The tables the pipeline staged.
_STAGED = tuple(t for t in PUBLISHED if t not in _WRITTEN_HERE)


@dataclass(frozen=True)
class Writing:
    """What a writer of the folder holds: the lease, and the snapshot it publishes over."""

    lease: Lease
    current: Snapshot | None
    version: str | None  # of current.json, for the switch's precondition


@dataclass(frozen=True)
class Destinations:
    """What a snapshot is published as beside the folder's own tables."""

    current_metric_version: str  # the version the `*_current` views show
    bigquery: BigQueryTarget | None = None  # also load the changed partitions there
    bigquery_days: Collection[datetime.date] | None = None  # those days only (None: all)


@dataclass(frozen=True)
class Published:
    record: runlog.RunRecord  # ended "published"
    snapshot: Snapshot
    scorecard: pa.Table  # sql/report/run_summary.sql
    days: pa.Table  # sql/report/headline.sql
    counts: pa.Table
    expectations: int
    warnings: int
    bigquery: BigQueryLoad | None  # what was loaded there, if anywhere
    analyst: Kept  # the analyst's tables and views carried over from the last mpg.duckdb


@contextlib.contextmanager
def _database_file(run: RunFiles) -> Iterator[str]:
    """Where the new database is built: in the run's staging folder locally (renamed into place
    later), in a temporary folder for object storage (used for the checks only)."""
    if not run.store.remote:
        path = run.store.storage.full(run.database)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="mpg-") as folder:
        yield f"{folder}/{DATABASE}"


@dataclass(frozen=True)
class NewDatabase:
    """The run's database file, being made in a thread (`database_ahead`)."""

    path: str
    made: Future[duckdb.DuckDBPyConnection]

    @contextlib.contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The database once made, closed after the block."""
        con = self.made.result()
        with writes(self.path), con:
            yield con


@contextlib.contextmanager
def database_ahead(run: RunFiles, current_version: str) -> Iterator[NewDatabase]:
    """Start making the run's database (its tables, empty, and its macros and views: 0.17 s of
    DuckDB binding whatever the data, `new_database`) in a thread while the block runs the
    pipeline; publishing fills it. Whatever happens in the block, the thread is waited for and
    the database closed; its file in the run's staging folder goes with the run's other files
    when the run fails."""
    with _database_file(run) as path, ThreadPoolExecutor(1, "mpg-database") as maker:
        made = maker.submit(new_database, path, current_version)
        try:
            yield NewDatabase(path, made)
        finally:
            with contextlib.suppress(Exception):  # an error of the block's comes first
                made.result().close()


def _validate(
    con: duckdb.DuckDBPyConnection, store: OutputStore, staged: Staged, record: runlog.RunRecord
) -> tuple[pa.Table, str]:
    """The output suites on the staged tables, with the source suites' results; a failed
    fail-severity expectation stops the run, its report kept in the run log."""
    counts = con.table("record_counts").to_arrow_table()
    outputs = validate_outputs(con, counts, engine_named())
    results = concat([staged.source_results, outputs], VALIDATION_RESULTS)
    report = render_report(results)
    if fatal_failures(results).num_rows:
        where = store.run(record.run_id).failed_validation
        store.storage.write_text(where, report)
        raise_for_failures(results, Path(store.storage.uri_of(where)))
    return results, report


def _previous_runs(store: OutputStore, files: pa.Table) -> pa.Table:
    """The `runs` table the previous snapshot published (none before the first)."""
    return store.read_parquets(table_files(files, "runs"), RUNS)


def _referenced(store: OutputStore, snapshot: Snapshot) -> set[str]:
    """Every file a snapshot needs: its state, data files, segments and Iceberg metadata."""
    files = store.read_parquet(snapshot.state["files"], DATA_FILES).column("path").to_pylist()
    segments = pq.read_table(store.storage.open_input(snapshot.state["segments"]))
    return {
        *snapshot.own_files(),
        store.run(snapshot.run_id).snapshot,
        *files,
        *segments.column("path").to_pylist(),
    }


def _iceberg_metadata(snapshot: Snapshot) -> set[str]:
    return {*snapshot.tables.values(), *snapshot.metadata_files}


def collect_garbage(store: OutputStore, kept: list[Snapshot]) -> int:
    """Remove what no kept snapshot references: older snapshots' files and killed runs'. Of the
    snapshot before the current one only what mpg's readers use is kept (its state and data
    files), not its Iceberg metadata: the tables' history is one snapshot deep."""
    referenced: set[str] = set()
    for snapshot in kept[1:]:
        referenced |= _referenced(store, snapshot) - _iceberg_metadata(snapshot)
    for snapshot in kept[:1]:
        referenced |= _referenced(store, snapshot)
    return store.collect(referenced)


def publish(
    staged: Staged, over: Writing, record: runlog.RunRecord, to: Destinations, database: NewDatabase
) -> Published:
    """Check, commit and switch to the staged snapshot over the current one (`over`, whose
    lease is still held), its tables filled into `database` (made for
    `to.current_metric_version`); returns what was published."""
    run, store, previous = staged.run, staged.run.store, over.current
    whole: dict[str, str | None] = {}
    with ThreadPoolExecutor(1, "mpg-commit") as committer:
        # The staged tables' Iceberg commits (Python: 0.25 s at 2M spans) go on in a thread
        # while DuckDB fills the database file (native code, which lets it run); nothing they
        # write is published before the switch, and a failed check waits for them, then leaves
        # their files to the next run's collection.
        commits = committer.submit(_commit, store, previous, staged.changes, staged.files, _STAGED)
        with progress.phase("publish") as step, database.connection() as con:
            fill_tables(con, store, staged.files, list(_STAGED))
            analyst = (
                Kept()
                if store.remote
                else keep_analyst_objects(con, Path(store.storage.full(DATABASE)))
            )
            results, report = _validate(con, store, staged, record)
            whole["validation_results"] = _write_whole(run, "validation_results", results)
            con.from_arrow(results).insert_into("validation_results")
            scorecard, days, counts = read_summary(con)
            step.done(pc.sum(counts.column("accepted")).as_py() or 0)
            record = record.ended("published", counts=counts)
            runs = runlog.runs_table(store, record, _previous_runs(store, staged.files))
            whole["runs"] = _write_whole(run, "runs", runs)
            con.from_arrow(runs).insert_into("runs")
        files = data_files_after(staged.files, DATA_FILES.empty_table(), whole)
        load = None
        if to.bigquery is not None:
            from mpg.pipelines.bigquery import publish_bigquery  # ~1 s to import the client

            load = publish_bigquery(
                store,
                files,
                to.bigquery,
                to.bigquery_days,
                current_version=to.current_metric_version,
            )
        whole_changes = [TableChange(t, (p,) if p else (), None) for t, p in whole.items()]
        tables, metadata = commits.result()
        written = _commit(store, previous, whole_changes, files, _WRITTEN_HERE)
        tables, metadata = {**tables, **written[0]}, tuple(sorted({*metadata, *written[1]}))
        state = {**staged.state, "files": run.state("files")}
        store.write_parquet(files, state["files"])
        snapshot = Snapshot(
            run_id=run.run_id,
            key=staged.key,
            tables={name: tables[name] for name in PUBLISHED},
            state=state,
            metadata_files=metadata,
            previous=None if previous is None else previous.run_id,
        )
        over.lease.check()  # a writer that lost its lease must not publish over its successor
        switch(store, snapshot, over.version)
        if not store.remote:
            Path(database.path).replace(store.storage.full(DATABASE))
    store.storage.write_text(REPORT, report)
    runlog.write_record(store, record)
    runlog.prune_records(store, runs)
    collect_garbage(store, [snapshot, *([previous] if previous else [])])
    warnings = pc.sum(pc.invert(results.column("success"))).as_py() or 0
    return Published(
        record, snapshot, scorecard, days, counts, results.num_rows, warnings, load, analyst
    )


def _commit(
    store: OutputStore,
    previous: Snapshot | None,
    changes: Sequence[TableChange],
    files: pa.Table,
    tables: Collection[str],
) -> tuple[dict[str, str], tuple[str, ...]]:
    # pyiceberg takes 0.3 s to import: `run.warm_up` imports it while the pipeline works.
    from mpg.pipelines.iceberg import commit_tables

    metadata = previous.tables if previous else {}
    return commit_tables(store, metadata, changes, files, tables)


def _write_whole(run: RunFiles, table: str, rows: pa.Table) -> str | None:
    """An unpartitioned table's one data file for this run (None when it has no rows)."""
    if rows.num_rows == 0:
        return None
    path = run.data_file(table)
    run.store.write_parquet(rows.cast(PUBLISHED[table]), path)
    return path
