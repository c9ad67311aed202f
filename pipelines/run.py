"""`mpg run`: trace files -> validated, accounted, published goodput tables.

    mpg run --traces data/sample_traces --out out [--buckets 64] [beam options...]

Two Beam pipelines run into the run's staging folder: ingest (files -> the record store,
quarantine and counts; `pipelines/ingest.py`) and account (the store's job buckets -> job-day
goodput and ledger, and the source expectation suites; `pipelines/account.py`). Then `publish`
builds the DuckDB file there and runs the output suites: a failed one stops the run here.
Otherwise the finished folder becomes the current snapshot in one rename (`pipelines/layout.py`):
a run that fails or is killed at any point leaves the previous tables current and readable.
Every run is recorded in `DIR/runs/` (`pipelines/runlog.py`), whatever its outcome.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.options.pipeline_options import PipelineOptions

from mpg.errors import find_user_error, one_line
from mpg.metrics import DEFAULT_METRIC_VERSION
from mpg.pipelines import runlog
from mpg.pipelines.account import build_account
from mpg.pipelines.bigquery_target import BigQueryLoad, BigQueryTarget
from mpg.pipelines.ingest import build_ingest
from mpg.pipelines.io import TraceFile, discover_trace_files, stored_buckets
from mpg.pipelines.layout import DATABASE, REPORT, OutputLayout
from mpg.pipelines.options import RunOptions
from mpg.pipelines.publish import (
    PublishedRun,
    build_database,
    read_headline,
    validate_database,
    write_runs,
)
from mpg.quality import fatal_failures, raise_for_failures


def run(opts: RunOptions) -> PublishedRun:
    """Ingest and account into a staging folder under `opts.out`, then publish it."""
    files, skipped = discover_trace_files(opts.traces)
    layout = OutputLayout(opts.out)
    with layout.locked():
        layout.clear_leftovers()
        runlog.settle_unfinished(layout.runs, layout.snapshot_ids())
        record = runlog.RunRecord.start(opts.traces, files, opts.metric_versions)
        runlog.write_record(layout.runs, record)
        staging = layout.staging(record.run_id)
        try:
            _compute(opts, files, staging)
            database = build_database(staging)
            checks = _validate(staging, layout, record.run_id)
            headline, counts = read_headline(database)
            record = record.ended("published", counts=counts)
            runs = runlog.runs_table(layout.runs, record)
            write_runs(database, runs)
            # Before the switch: a failed BigQuery publish fails the run, and a rerun redoes it.
            bigquery = _publish_bigquery(opts.bigquery, staging, runs) if opts.bigquery else None
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
        bigquery=bigquery,
    )


def _publish_bigquery(target: BigQueryTarget, staging: Path, runs: pa.Table) -> BigQueryLoad:
    """Every table of the staged run, all days (a run recomputes everything from its traces).

    The BigQuery client is imported here, by the runs that publish there (it costs ~1 s).
    """
    from mpg.pipelines.bigquery import publish_bigquery

    return publish_bigquery(
        staging / "tables", target, None, runs=runs, current_version=DEFAULT_METRIC_VERSION
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


def _compute(opts: RunOptions, files: list[TraceFile], staging: Path) -> None:
    beam_options = PipelineOptions(list(opts.beam_args))
    with beam.Pipeline(options=beam_options) as p:
        build_ingest(p, files, opts.buckets, opts.block_bytes, staging)
    store = staging / "records"
    with beam.Pipeline(options=beam_options) as p:
        build_account(p, store, stored_buckets(store), opts.metric_versions, staging)
