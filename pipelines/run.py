"""`mpg run`: trace files -> validated, accounted, published goodput tables, kept up to date.

    mpg run --traces data/sample_traces --out out [--buckets 64] [--full] [beam options...]

A run compares the trace root with what the current snapshot has ingested (`pipelines/state.py`)
and, with nothing new, changed or removed, publishes nothing. Otherwise its staging folder starts
as links to the current snapshot, and one Beam pipeline (`pipelines/update.py`) parses the new
files and brings the touched job buckets up to date: parsed store, record store, job tables,
quarantine. A first run is the same pipeline over an empty state. Then `publish` builds the
DuckDB file there and runs the output suites: a failed one stops the run here. Otherwise the
finished folder becomes the current snapshot in one rename (`pipelines/layout.py`): a run that
fails or is killed at any point leaves the previous tables current and readable, and the next
run does the work again. Every run is recorded in `DIR/runs/` (`pipelines/runlog.py`).
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.options.pipeline_options import PipelineOptions

from mpg.catalog import load_catalog
from mpg.errors import find_user_error, one_line
from mpg.pipelines import runlog
from mpg.pipelines.buckets import UpdateContext
from mpg.pipelines.io import TraceFile, discover_trace_files, write_parquet
from mpg.pipelines.layout import DATABASE, REPORT, OutputLayout, link_snapshot
from mpg.pipelines.options import RunOptions
from mpg.pipelines.publish import (
    PublishedRun,
    build_database,
    read_headline,
    validate_database,
    write_runs,
)
from mpg.pipelines.state import (
    Plan,
    StateKey,
    finished_manifest,
    load_previous,
    parse_quarantine_prefix,
    plan_run,
    read_bucket_states,
    record_counts,
    write_manifest,
)
from mpg.pipelines.update import CHANGED_DAYS, INGESTED, WORK, build_update
from mpg.quality import fatal_failures, raise_for_failures
from mpg.version import code_version


def run(opts: RunOptions) -> PublishedRun:
    """Bring the output folder up to date with the trace root: ingest what is new into a staging
    folder under `opts.out`, then publish it. With nothing new, publish nothing."""
    files, skipped = discover_trace_files(opts.traces)
    layout = OutputLayout(opts.out)
    with layout.locked():
        layout.clear_leftovers()
        runlog.settle_unfinished(layout.runs, layout.snapshot_ids())
        key = StateKey(
            opts.buckets, code_version(), opts.metric_versions, opts.current_metric_version
        )
        plan = plan_run(files, load_previous(layout.current), key, opts.full)
        record = runlog.RunRecord.start(opts.traces, files, opts.metric_versions)
        if plan.up_to_date:
            record = record.ended("up-to-date", message="no new, changed or removed trace files")
            runlog.write_record(layout.runs, record)
            headline, counts = read_headline(opts.out / DATABASE)
            return PublishedRun(
                record.run_id,
                opts.out / DATABASE,
                headline,
                counts,
                len(files),
                skipped,
                plan=plan.reason if plan.previous is None else "up to date",
            )
        runlog.write_record(layout.runs, record)
        staging = layout.staging(record.run_id)
        try:
            changed_days = _compute(opts, plan, files, staging, record.run_id, key)
            database = build_database(staging, opts.current_metric_version)
            checks = _validate(staging, layout, record.run_id)
            headline, counts = read_headline(database)
            record = record.ended("published", counts=counts)
            write_runs(database, runlog.runs_table(layout.runs, record))
            layout.commit(staging, record.run_id)
        except BaseException as exc:
            error = find_user_error(exc)
            message = one_line(error) if error else f"{type(exc).__name__}: {exc}"
            interrupted = isinstance(exc, KeyboardInterrupt)
            record = record.ended("interrupted" if interrupted else "failed", message=message)
            with contextlib.suppress(OSError):  # a full disk must not hide the first error
                runlog.write_record(layout.runs, record)
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        runlog.write_record(layout.runs, record)
    return PublishedRun(
        run_id=record.run_id,
        database=opts.out / DATABASE,
        headline=headline,
        counts=counts,
        files=len(files),
        skipped=skipped,
        expectations=checks.num_rows,
        warnings=pc.sum(pc.invert(checks.column("success"))).as_py() or 0,
        plan=plan.reason,
        parsed=len(plan.new),
        retracted=len(plan.retracted),
        changed_days=changed_days,
    )


def _validate(staging: Path, layout: OutputLayout, run_id: str) -> pa.Table:
    """Check the staged outputs; a failed fail-severity expectation stops the run unpublished,
    with the report kept in the run log (`DIR/runs/<run id>-validation.md`). Returns the results
    (VALIDATION_RESULTS), every failure in them a warning."""
    results = validate_database(staging)
    if fatal_failures(results).num_rows:
        report = layout.runs / f"{run_id}-validation.md"
        layout.runs.mkdir(parents=True, exist_ok=True)
        report.write_text((staging / REPORT).read_text())
        raise_for_failures(results, report)
    return results


def _compute(
    opts: RunOptions,
    plan: Plan,
    files: list[TraceFile],
    staging: Path,
    run_id: str,
    key: StateKey,
) -> list[tuple[str, str]]:
    """Run the update pipeline into `staging` and finish its state; returns the (table, day)
    partitions of the job tables whose rows changed."""
    previous = plan.previous
    if previous is not None:
        link_snapshot(previous.snapshot, staging)
        for name in plan.retracted:
            for path in (staging / "tables" / "quarantine").glob(
                f"{parse_quarantine_prefix(name)}*"
            ):
                path.unlink()
    ctx = UpdateContext(
        staging=str(staging),
        previous=None if previous is None else str(previous.snapshot),
        run_id=run_id,
        live=plan.live(),
        new=frozenset(f.file.name for f in plan.new),
        catalog=load_catalog(),
        metric_versions=opts.metric_versions,
        previous_data_end=None if previous is None else previous.data_end,
    )
    with beam.Pipeline(options=PipelineOptions(list(opts.beam_args))) as p:
        build_update(p, plan, ctx, {f.name: f for f in files}, opts.buckets, opts.block_bytes)
    ingested = json.loads((staging / INGESTED).read_text())
    changed = sorted(tuple(c) for c in json.loads((staging / CHANGED_DAYS).read_text()))
    shutil.rmtree(staging / WORK)
    manifest = finished_manifest(plan, ingested)
    write_manifest(staging, manifest, key)
    counts = record_counts(manifest, read_bucket_states(staging))
    write_parquet(counts, staging / "tables" / "record_counts" / "part-0.parquet")
    return changed
