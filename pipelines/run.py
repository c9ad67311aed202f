"""`mpg run`: trace files -> validated, accounted, published goodput tables, kept up to date.

    mpg run --traces data/sample_traces --out out [--full] [beam options...]
    mpg run --traces gs://fleet-logs/traces --out gs://fleet-goodput/mpg --runner=DataflowRunner ...

A run takes the output folder's lease, compares the trace root with what the current snapshot
ingested (`mpg.pipelines.plan`) and, with nothing new, changed or removed, publishes nothing.
Otherwise one Beam pipeline (`mpg.pipelines.update`) parses the new files, brings the changed
jobs up to date and, in its last steps, writes the new snapshot's files and state
(`mpg.pipelines.sinks`, `mpg.pipelines.finish`); the launcher then publishes it in one switch
(`mpg.pipelines.publish`). A run that fails or is killed at any point
leaves the previous snapshot current, and the next one removes what it left. Every run is
recorded in `DIR/runs/` (`mpg.output.runlog`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc

from mpg.cli import progress
from mpg.core.errors import find_user_error, one_line
from mpg.core.version import code_version
from mpg.definitions.catalog import load_catalog
from mpg.definitions.config import read_config
from mpg.definitions.costs import cost_rates, load_cost_catalog
from mpg.output import runlog
from mpg.output.database import table_files
from mpg.output.snapshot import Snapshot, read_current, read_snapshot
from mpg.output.state_key import StateKey
from mpg.output.store import LOCK, OutputStore
from mpg.pipelines.accounting import Accounting
from mpg.pipelines.buckets import RecordStore
from mpg.pipelines.days import DayTables
from mpg.pipelines.finish import DAY_TABLES, Staged, StatePlan, data_files_after, table_changes
from mpg.pipelines.io import TraceFile, discover_trace_files
from mpg.pipelines.logs import run_log
from mpg.pipelines.options import RunOptions
from mpg.pipelines.plan import RunPlan, job_work, plan_run, planned_jobs
from mpg.pipelines.publish import (
    Destinations,
    Published,
    Writing,
    collect_garbage,
    database_ahead,
    publish,
)
from mpg.pipelines.quarantine import QuarantineSources
from mpg.pipelines.result import RunResult
from mpg.pipelines.runners import pipeline_options
from mpg.pipelines.sinks import FILE_STATS, SOURCE_RESULTS, TABLE_CHANGES
from mpg.pipelines.update import UpdatePlan, build_update
from mpg.quality.engine import engine_named
from mpg.schemas import (
    COST_RATES,
    DATA_FILES,
    MANIFEST,
    VALIDATION_RESULTS,
)
from mpg.storage import Storage
from mpg.storage.lock import hold_lease


@contextlib.contextmanager
def recorded(
    store: OutputStore, record: runlog.RunRecord, log_level: str | None = None
) -> Iterator[None]:
    """Write the run's record as started, and its log beside it (`mpg.pipelines.logs`, with
    `log_level` on the terminal); any failure inside (Ctrl-C and SIGTERM included:
    `interrupted`) is written to the run log before it propagates, and the run's scratch goes."""
    runlog.write_record(store, record)
    with run_log(store, record.run_id, log_level):
        try:
            yield
        except BaseException as exc:
            _record_failure(store, record, exc)
            raise


def _record_failure(store: OutputStore, record: runlog.RunRecord, exc: BaseException) -> None:
    """The run's scratch removed first (on a full disk, that makes room for the record), then
    its record, ended by `exc`."""
    error = find_user_error(exc)
    message = one_line(error) if error else f"{type(exc).__name__}: {exc}"
    interrupted = isinstance(exc, KeyboardInterrupt)
    ended = record.ended("interrupted" if interrupted else "failed", message=message)
    # Neither may hide the first error (a full disk, a store gone).
    with contextlib.suppress(Exception):
        store.run(record.run_id).delete_scratch()
    with contextlib.suppress(Exception):
        runlog.write_record(store, ended)


def kept_snapshots(store: OutputStore, current: Snapshot | None) -> list[Snapshot]:
    """The current snapshot and the one before it (kept for readers that started on it)."""
    if current is None:
        return []
    before = read_snapshot(store, current.previous) if current.previous else None
    return [current, *([before] if before else [])]


@contextlib.contextmanager
def writing(store: OutputStore, run_id: str) -> Iterator[Writing]:
    """Hold the folder's lease; settle what killed runs left (their records, their files);
    yield the current snapshot and the version of `current.json` to publish over."""
    with hold_lease(store.storage, LOCK, owner=run_id) as lease:
        current, version = read_current(store)
        kept = kept_snapshots(store, current)
        runlog.settle_unfinished(store, {s.run_id for s in kept})
        collect_garbage(store, kept)
        yield Writing(lease, current, version)


def warm_up(expectations: str) -> None:
    """Import what accounting and publishing need (scipy's special functions for checkpoint
    advice: 0.06 s; pyiceberg: 0.3 s after the pipeline's own imports; Great Expectations too
    when it is the engine that checks the suites: seconds) in a thread, while the pipeline
    works: its DuckDB and Polars steps leave the interpreter idle much of the time. The steps
    that need them import them as usual, waiting if the thread is not done. (The database
    publishing fills is made beside the pipeline too: `publish.database_ahead`.)
    """

    def imports() -> None:
        importlib.import_module("scipy.special")
        if expectations == "great-expectations":
            from mpg.quality.gx import start_gx

            start_gx()
        importlib.import_module("mpg.pipelines.iceberg")

    threading.Thread(target=imports, name="mpg-warm-up", daemon=True).start()


def run(opts: RunOptions) -> RunResult:
    """Bring the output folder up to date with the trace root; with nothing new, publish
    nothing."""
    expectations = engine_named()
    warm_up(expectations)
    files, skipped = discover_trace_files(opts.traces)
    store = OutputStore(opts.out)
    record = runlog.RunRecord.start(opts.traces, files, opts.metric_versions)
    key = StateKey(
        code_version=code_version(),
        metric_versions=opts.metric_versions,
        current_metric_version=opts.current_metric_version,
        bigquery="" if opts.bigquery is None else opts.bigquery.location,
    )
    rates = cost_rates(load_cost_catalog(), load_catalog(), read_config(opts.out))
    with writing(store, record.run_id) as held, recorded(store, record, opts.log_level):
        current = held.current
        with progress.phase("plan", unit="files", total=len(files)) as step:
            plan = plan_run(store, files, current, key, opts.full, rates)
            step.done(len(files))
        if plan.up_to_date:
            progress.summary(0)
            ended = record.ended("up-to-date", message="no new, changed or removed trace files")
            runlog.write_record(store, ended)
            return RunResult.nothing_new(store, ended.run_id, current, len(files), skipped)
        version = plan.key.current_metric_version
        with database_ahead(store.run(record.run_id), version) as database:
            staged, read = _compute(opts, plan, store, record.run_id, rates)
            changed = sorted({d for _, d in staged.changed_days})
            to = Destinations(version, opts.bigquery, plan.bigquery_days(changed))
            published = publish(staged, held, record, to, database)
        progress.summary(read)
    return _result(store, published, plan, staged, len(files), skipped)


def _result(
    store: OutputStore, published: Published, plan: RunPlan, staged: Staged, files: int,
    skipped: list[str],
) -> RunResult:  # fmt: skip
    return RunResult(
        run_id=published.record.run_id,
        out=store.uri,
        scorecard=published.scorecard,
        days=published.days,
        counts=published.counts,
        files=files,
        skipped=skipped,
        expectations=published.expectations,
        warnings=published.warnings,
        plan=plan.reason,
        parsed=len(plan.delta.new),
        retracted=len(plan.delta.retracted),
        changed_days=[(t, d.isoformat()) for t, d in staged.changed_days],
        bigquery=published.bigquery,
        analyst=published.analyst,
    )


@dataclass(frozen=True)
class Prepared:
    """A run's pipeline, decided: what it is built from, and what finishing it needs."""

    update: UpdatePlan
    files: pa.Table  # the previous snapshot's DATA_FILES (none when computing everything)
    # The job buckets the run's records fill, whatever --buckets says: how much work it has to
    # share between worker threads (`mpg.pipelines.runners.pipeline_options`).
    filled: int


def prepare(
    opts: RunOptions, plan: RunPlan, store: OutputStore, run_id: str, rates: pa.Table
) -> Prepared:
    """Everything the update pipeline is built from: the jobs to rewrite, the bucket count,
    the previous snapshot's files and ends of data, the prices (`rates`, COST_RATES)."""
    previous = plan.previous
    work = job_work(store, previous, plan.delta.retracted)
    filled = work.buckets(plan.delta.new, opts.records_per_bucket)
    buckets = opts.buckets or filled
    files = (
        store.read_parquet(previous.state["files"], DATA_FILES)
        if previous
        else DATA_FILES.empty_table()
    )
    catalog = load_catalog()
    run = store.run(run_id)
    records = RecordStore(
        run, buckets, previous.state["jobs"] if previous else None, frozenset(plan.delta.retracted)
    )
    quarantine_file = table_files(files, "quarantine")
    quarantine = quarantine_file[0] if quarantine_file else None
    update = UpdatePlan(
        new=plan.delta.new,
        planned=tuple(planned_jobs(run, work, buckets)),
        previous_buckets=tuple(work.previous_buckets(buckets)),
        records=records,
        accounting=Accounting(catalog, plan.key.computed_versions, plan.key.coverage),
        days=DayTables(run, _day_files(files), rates, repriced=_repriced(store, files, rates)),
        quarantine=QuarantineSources(
            run,
            {f.name: f for f in plan.delta.new} | _unchanged_files(plan, opts.traces),
            quarantine,
            frozenset(plan.delta.kept.column("name").to_pylist()),
        ),
        state=StatePlan(
            records=records,
            kept=plan.delta.kept,
            segments=previous.state["segments"] if previous else None,
            quarantine=quarantine,
            removed=work.retracted,
            traces=opts.traces,
            rates=rates,
        ),
        block_bytes=opts.block_bytes,
        expectations=engine_named(),
    )
    return Prepared(update, files, filled)


def _compute(
    opts: RunOptions, plan: RunPlan, store: OutputStore, run_id: str, rates: pa.Table
) -> tuple[Staged, int]:
    """Run the update pipeline, which writes the new snapshot but its switch; returns it and
    the lines the run read."""
    prepared = prepare(opts, plan, store, run_id, rates)
    with progress.phase("pipeline") as step:
        with beam.Pipeline(options=pipeline_options(opts.beam_args, prepared.filled)) as p:
            build_update(p, prepared.update)
        stats = store.read_parquet(prepared.update.run.result(FILE_STATS), MANIFEST)
        step.done(pc.sum(stats.column("lines_read")).as_py() or 0)
    staged = _finish(store, plan, prepared)
    return staged, step.count


def _repriced(store: OutputStore, files: pa.Table, rates: pa.Table) -> tuple[str, ...]:
    """Every published day (YYYY-MM-DD) when the prices differ from the previous snapshot's, so
    that its costs and advice are priced again; none otherwise."""
    previous = table_files(files, "cost_rates")
    if not previous or store.read_parquet(previous[0], COST_RATES).equals(rates):
        return ()
    priced = files.filter(pc.is_in(files.column("table"), pa.array(DAY_TABLES)))
    return tuple(sorted({d.isoformat() for d in priced.column("day").to_pylist()}))


def _day_files(files: pa.Table) -> dict:
    rows = files.filter(pc.is_in(files.column("table"), pa.array(DAY_TABLES)))
    return {(r["table"], r["day"]): r["path"] for r in rows.to_pylist()}


def _unchanged_files(plan: RunPlan, traces: str) -> dict[str, TraceFile]:
    """Input files ingested before (their text may be needed for a job reconciled again)."""
    root = Storage(traces).uri
    return {
        r["name"]: TraceFile(r["source"], root, r["name"], r["size"], r["mtime_ns"])
        for r in plan.delta.kept.to_pylist()
    }


def _finish(store: OutputStore, plan: RunPlan, prepared: Prepared) -> Staged:
    """The new snapshot as the pipeline's sinks left it, for publishing."""
    run = prepared.update.run
    quarantine = run.data_file("quarantine")
    whole = {
        "quarantine": quarantine if store.storage.exists(quarantine) else None,
        "record_counts": run.data_file("record_counts"),
        "cost_rates": run.data_file("cost_rates"),
    }
    changes = store.read_parquet(run.result(TABLE_CHANGES), DATA_FILES)
    everything = plan.previous is None
    return Staged(
        run=run,
        key=plan.key,
        state={name: run.state(name) for name in ("manifest", "jobs", "segments")},
        files=data_files_after(prepared.files, changes, whole),
        changes=table_changes(changes, whole, everything),
        source_results=store.read_parquet(run.result(SOURCE_RESULTS), VALIDATION_RESULTS),
        changed_days=tuple(
            (r["table"], r["day"])
            for r in changes.to_pylist()
            if r["table"] in ("job_day_goodput", "chip_time_ledger")
        ),
    )
