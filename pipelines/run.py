"""`mpg run`: trace files -> validated, accounted, published goodput tables.

    mpg run --traces data/sample_traces --out out [--buckets 64] [beam options...]

Two Beam pipelines run into a staging folder beside the published one: ingest (files -> the
record store, quarantine and counts; `pipelines/ingest.py`) and account (the store's job buckets
-> job-day goodput and ledger; `pipelines/account.py`). Only when both have succeeded does
`publish` build the DuckDB file and move the new tables into place, so a failed run leaves the
previous ones as they were.
"""

from __future__ import annotations

import shutil
import uuid

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from mpg.pipelines.account import build_account
from mpg.pipelines.ingest import build_ingest
from mpg.pipelines.io import discover_trace_files, stored_buckets
from mpg.pipelines.options import RunOptions
from mpg.pipelines.publish import PublishedRun, publish


def run(opts: RunOptions) -> PublishedRun:
    """Ingest and account into a staging folder under `opts.out`, then publish it."""
    files, skipped = discover_trace_files(opts.traces)
    opts.out.mkdir(parents=True, exist_ok=True)
    staging = opts.out / f".staging-{uuid.uuid4().hex[:12]}"
    beam_options = PipelineOptions(list(opts.beam_args))
    try:
        with beam.Pipeline(options=beam_options) as p:
            build_ingest(p, files, opts.buckets, opts.block_bytes, staging)
        store = staging / "records"
        with beam.Pipeline(options=beam_options) as p:
            build_account(p, store, stored_buckets(store), opts.metric_versions, staging)
        return publish(staging, opts.out, files=len(files), skipped=skipped)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
