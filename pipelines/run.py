"""`mpg run`: trace files -> validated, accounted, published goodput tables.

    mpg run --traces data/sample_traces --out out [--buckets 64] [beam options...]

One Beam pipeline reads every trace file as blocks of lines, parses and validates them
(ParseTraceRecords), reconciles each job bucket (ReconcileJobs: duplicates, unknown jobs),
accounts chip-time (AccountChipTime) and writes Parquet into a staging folder beside the
published one. Only when the pipeline has succeeded does `publish` build the DuckDB file and move
the new tables into place, so a failed run leaves the previous ones as they were.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
from apache_beam.options.pipeline_options import PipelineOptions

from mpg.catalog import load_catalog
from mpg.pipelines.io import (
    TraceFile,
    discover_trace_files,
    read_line_blocks,
    stable_id,
    write_by_day,
    write_parquet,
)
from mpg.pipelines.options import RunOptions
from mpg.pipelines.publish import PublishedRun, publish
from mpg.schemas import DAY_COLUMN, RECORD_COUNTS, SOURCES
from mpg.transforms.parse import ParsedBlock
from mpg.transforms.reconcile import BucketRecords
from mpg.transforms.steps import (
    AccountChipTime,
    Counts,
    CountRecords,
    ParseTraceRecords,
    ReconcileJobs,
)


def _write_parse_quarantine(parsed: ParsedBlock, staging: str) -> None:
    if parsed.quarantine.num_rows:
        first = parsed.quarantine.column("line")[0].as_py()
        name = f"part-{stable_id(f'{parsed.file}:{first}')}.parquet"
        write_parquet(parsed.quarantine, Path(staging) / "tables" / "quarantine" / name)


def _write_bucket(bucket: BucketRecords, staging: str) -> None:
    """The accepted records of one bucket into the record store, and its quarantine rows."""
    root = Path(staging)
    for source in SOURCES:
        write_by_day(
            bucket.table(source),
            DAY_COLUMN[source],
            root / "records" / f"source={source}",
            f"bucket={bucket.bucket:04d}/part-0.parquet",
        )
    if bucket.quarantine.num_rows:
        name = f"part-bucket-{bucket.bucket:04d}.parquet"
        write_parquet(bucket.quarantine, root / "tables" / "quarantine" / name)


def _write_job_tables(accounted: tuple[int, pa.Table, pa.Table], staging: str) -> None:
    bucket, job_days, ledger = accounted
    tables = Path(staging) / "tables"
    name = f"part-b{bucket:04d}.parquet"
    write_by_day(job_days, "day", tables / "job_day_goodput", name)
    write_by_day(ledger, "day", tables / "chip_time_ledger", name)


def _write_counts(per_source: list[tuple[str, Counts]], staging: str) -> None:
    totals = dict(per_source)
    rows = [(s, *totals.get(s, (0, 0, 0, 0))) for s in SOURCES]
    table = pa.table(
        {name: [r[i] for r in rows] for i, name in enumerate(RECORD_COUNTS.names)},
        schema=RECORD_COUNTS,
    )
    write_parquet(table, Path(staging) / "tables" / "record_counts" / "part-0.parquet")


def build_pipeline(p: beam.Pipeline, files: list[TraceFile], opts: RunOptions, staging: Path) -> None:
    """Compose the run's steps on `p`; every step label is stable (runners key state by it)."""
    catalog = load_catalog()
    out = str(staging)
    parsed = (
        p
        | "ListTraceFiles" >> beam.Create(files)
        | "ReadLineBlocks" >> beam.FlatMap(read_line_blocks, opts.block_bytes)
        | "ParseTraceRecords" >> ParseTraceRecords(catalog)
    )
    buckets = parsed | "ReconcileJobs" >> ReconcileJobs(opts.buckets)
    accounted = buckets | "AccountChipTime" >> AccountChipTime(catalog, opts.metric_versions)

    _ = parsed | "WriteParseQuarantine" >> beam.Map(_write_parse_quarantine, out)
    _ = buckets | "WriteRecordStore" >> beam.Map(_write_bucket, out)
    _ = accounted | "WriteJobTables" >> beam.Map(_write_job_tables, out)
    _ = (
        (parsed, buckets)
        | "CountRecords" >> CountRecords()
        | "GatherCounts" >> beam.combiners.ToList()
        | "WriteRecordCounts" >> beam.Map(_write_counts, out)
    )


def run(opts: RunOptions) -> PublishedRun:
    """Run the pipeline into a staging folder under `opts.out`, then publish it."""
    files, skipped = discover_trace_files(opts.traces)
    opts.out.mkdir(parents=True, exist_ok=True)
    staging = opts.out / f".staging-{uuid.uuid4().hex[:12]}"
    try:
        with beam.Pipeline(options=PipelineOptions(list(opts.beam_args))) as p:
            build_pipeline(p, files, opts, staging)
        return publish(staging, opts.out, files=len(files), skipped=skipped)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
