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

import json
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from mpg import progress
from mpg.catalog import load_catalog
from mpg.pipelines import runlog
from mpg.pipelines.buckets import UpdateContext
from mpg.pipelines.io import TraceFile, discover_trace_files
from mpg.pipelines.layout import DATABASE, OutputLayout, link_snapshot
from mpg.pipelines.options import RunOptions
from mpg.pipelines.publish import PublishedRun, read_published_headline
from mpg.pipelines.state import (
    INGESTED,
    Plan,
    StateKey,
    finish_state,
    finished_manifest,
    load_previous,
    parse_quarantine_prefix,
    plan_run,
)
from mpg.pipelines.transaction import publish, recorded, staged
from mpg.pipelines.update import build_update
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
            buckets=opts.buckets,
            code_version=code_version(),
            metric_versions=opts.metric_versions,
            current_metric_version=opts.current_metric_version,
            bigquery="" if opts.bigquery is None else opts.bigquery.location,
        )
        record = runlog.RunRecord.start(opts.traces, files, opts.metric_versions)
        with recorded(layout, record):
            with progress.phase("plan", unit="files", total=len(files)) as step:
                plan = plan_run(files, load_previous(layout.current), key, opts.full)
                step.done(len(files))
            if plan.up_to_date:
                progress.summary(0)
                return _up_to_date(layout, record, len(files), skipped)
            with staged(layout, record) as staging:
                changed_days, read = _compute(opts, plan, files, staging, record.run_id)
                days = plan.bigquery_days(changed_days)
                published = publish(
                    layout, staging, record, opts.current_metric_version, opts.bigquery, days
                )
            progress.summary(read)
    return PublishedRun(
        run_id=record.run_id,
        database=opts.out / DATABASE,
        headline=published.headline,
        counts=published.counts,
        files=len(files),
        skipped=skipped,
        expectations=published.expectations,
        warnings=published.warnings,
        plan=plan.reason,
        parsed=len(plan.new),
        retracted=len(plan.retracted),
        changed_days=changed_days,
        bigquery=published.bigquery,
    )


def _up_to_date(
    layout: OutputLayout, record: runlog.RunRecord, files: int, skipped: list[str]
) -> PublishedRun:
    """A run with nothing to do: recorded as such; the headline is the current snapshot's."""
    record = record.ended("up-to-date", message="no new, changed or removed trace files")
    runlog.write_record(layout.runs, record)
    headline, counts = read_published_headline(layout.current.resolve())
    database = layout.out / DATABASE
    return PublishedRun(
        record.run_id, database, headline, counts, files, skipped, plan="up to date"
    )


def _compute(
    opts: RunOptions,
    plan: Plan,
    files: list[TraceFile],
    staging: Path,
    run_id: str,
) -> tuple[list[tuple[str, str]], int]:
    """Run the update pipeline into `staging` and finish its state; returns the (table, day)
    partitions of the job tables whose rows changed, and the records (lines) it read."""
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
        metric_versions=plan.key.computed_versions,
        previous_data_end=None if previous is None else previous.data_end,
        coverage=plan.key.coverage,
    )
    with progress.phase("pipeline") as step:
        with beam.Pipeline(options=PipelineOptions(list(opts.beam_args))) as p:
            build_update(p, plan, ctx, {f.name: f for f in files}, opts.buckets, opts.block_bytes)
        ingested = json.loads((staging / INGESTED).read_text())
        step.done(sum(r["lines_read"] for r in ingested))
    changed = finish_state(staging, finished_manifest(plan, ingested), plan.key)
    return changed, step.count
