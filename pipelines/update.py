r"""The run's Beam pipeline: new trace files -> an updated record store and job tables.

    new files | ReadLineBlocks | ParseTraceRecords | KeyByJobBucket ---\
                                  | DescribeFiles        retracted buckets | GroupByJobBucket
                                  | WriteParseQuarantine                    | UpdateBucketRecords
    UpdateBucketRecords | AccountChangedJobs (end of data as a side input)   (mpg.pipelines.buckets)
                        | ValidateRecords (the source suites, on what was reconciled)
                        | quarantine refs | GroupByFile | WriteBucketQuarantine

The staging folder starts as links to the previous snapshot (`link_previous`); this pipeline
replaces what changes. Computing from scratch is the same pipeline over an empty state. Scratch
results for the launcher (what each parsed file held, which days changed) go to `work/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import apache_beam as beam
import pyarrow.compute as pc

from mpg.pipelines.buckets import (
    BucketUpdate,
    UpdateContext,
    account_bucket,
    update_bucket_records,
    write_bucket_quarantine,
)
from mpg.pipelines.io import TraceFile, read_line_blocks, write_parquet
from mpg.pipelines.layout import SOURCE_RESULTS
from mpg.pipelines.state import Plan, parse_quarantine_prefix
from mpg.transforms.parse import ParsedBlock
from mpg.transforms.reconcile import bucket_of
from mpg.transforms.steps import ParseTraceRecords, ValidateRecords, split_by_bucket

WORK = Path("work")
INGESTED = WORK / "ingested.json"  # per parsed file: lines read, quarantined, buckets
CHANGED_DAYS = WORK / "changed_days.json"  # (table, day) pairs whose rows changed

# Per input file: (lines read, quarantined at parsing, job buckets its records went to).
FileStats = tuple[int, int, frozenset[int]]


def _write_parse_quarantine(parsed: ParsedBlock, staging: str) -> None:
    if parsed.quarantine.num_rows:
        first = parsed.quarantine.column("line")[0].as_py()
        name = f"{parse_quarantine_prefix(parsed.file)}{first}.parquet"
        write_parquet(parsed.quarantine, Path(staging) / "tables" / "quarantine" / name)


def _describe(parsed: ParsedBlock, buckets: int) -> tuple[str, FileStats]:
    touched = pc.unique(bucket_of(parsed.records.column("job_id"), buckets)).to_pylist()
    return parsed.file, (parsed.lines_read, parsed.quarantine.num_rows, frozenset(touched))


def _add_stats(stats: Iterable[FileStats]) -> FileStats:
    lines, quarantined, touched = 0, 0, frozenset[int]()
    for s in stats:
        lines, quarantined, touched = lines + s[0], quarantined + s[1], touched | s[2]
    return lines, quarantined, touched


def _write_json(rows: list, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, sort_keys=True, default=str))


def _write_ingested(stats: list[tuple[str, FileStats]], staging: str) -> None:
    rows = [
        {"name": n, "lines_read": s[0], "quarantined": s[1], "buckets": sorted(s[2])}
        for n, s in stats
    ]
    _write_json(rows, Path(staging) / INGESTED)


class _UpdateBuckets(beam.DoFn):
    def __init__(self, ctx: UpdateContext) -> None:
        self._ctx = ctx

    def process(self, element) -> Iterator:
        bucket, parts = element
        for out in update_bucket_records(self._ctx, bucket, parts):
            if isinstance(out, BucketUpdate):
                yield out
            else:
                yield beam.pvalue.TaggedOutput("quarantine", out)


def _resolve_ends(element: tuple[int, Iterable[tuple]]) -> Iterator:
    """Per bucket: its end of data now (the new one if touched, else the previous one), and the
    untouched buckets with open jobs, which the end of data may move."""
    bucket, values = element
    values = list(values)
    new = [v[1] for v in values if v[0] == "new"]
    if new:
        yield new[0]
        return
    _, end, open_jobs = values[0]
    yield end
    if open_jobs:
        yield beam.pvalue.TaggedOutput("idle", bucket)


def _latest(values: Iterable[int | None]) -> int | None:
    return max((v for v in values if v is not None), default=None)


def build_update(
    p: beam.Pipeline,
    plan: Plan,
    ctx: UpdateContext,
    files: dict[str, TraceFile],
    buckets: int,
    block_bytes: int,
) -> None:
    """Compose the update on `p` (`files`: every input file, by name); step labels are stable
    (runners key state by them)."""
    out = ctx.staging
    parsed = (
        p
        | "ListNewTraceFiles" >> beam.Create([f.file for f in plan.new])
        | "ReadLineBlocks" >> beam.FlatMap(read_line_blocks, block_bytes)
        | "ParseTraceRecords" >> ParseTraceRecords(ctx.catalog)
    )
    _ = parsed | "WriteParseQuarantine" >> beam.Map(_write_parse_quarantine, out)
    _ = (
        parsed
        | "DescribeBlocks" >> beam.Map(_describe, buckets)
        | "DescribeFiles" >> beam.CombinePerKey(_add_stats)
        | "GatherFileStats" >> beam.combiners.ToList()
        | "WriteFileStats" >> beam.Map(_write_ingested, out)
    )
    retracted = p | "ListRetractedBuckets" >> beam.Create(
        [(b, None) for b in plan.retracted_buckets()]
    )
    updated = (
        (parsed | "KeyByJobBucket" >> beam.FlatMap(split_by_bucket, buckets), retracted)
        | "TouchedBuckets" >> beam.Flatten()
        | "GroupByJobBucket" >> beam.GroupByKey()
        | "UpdateBucketRecords"
        >> beam.ParDo(_UpdateBuckets(ctx)).with_outputs("quarantine", main="updates")
    )
    previous = [] if plan.previous is None else plan.previous.bucket_ends()
    ends = (
        (
            updated.updates
            | "NewEndOfData" >> beam.Map(lambda u: (u.records.bucket, ("new", u.records.data_end))),
            p
            | "PreviousBuckets"
            >> beam.Create(
                [(bucket, ("old", end, open_jobs)) for bucket, end, open_jobs in previous]
            ),
        )
        | "AllBuckets" >> beam.Flatten()
        | "GroupBuckets" >> beam.GroupByKey()
        | "ResolveEnds" >> beam.FlatMap(_resolve_ends).with_outputs("idle", main="ends")
    )
    data_end = ends.ends | "EndOfData" >> beam.CombineGlobally(_latest)
    _ = (
        (updated.updates, ends.idle)
        | "BucketsToAccount" >> beam.Flatten()
        | "AccountChangedJobs"
        >> beam.FlatMap(account_bucket, ctx, beam.pvalue.AsSingleton(data_end))
        | "GatherChangedDays" >> beam.combiners.ToList()
        | "WriteChangedDays" >> beam.Map(_write_json, Path(out) / CHANGED_DAYS)
    )
    _ = (
        updated.updates
        | "ReconciledRecords" >> beam.Map(lambda u: u.records)
        | "ValidateRecords" >> ValidateRecords(ctx.catalog)
        | "WriteSourceResults" >> beam.Map(write_parquet, Path(out) / SOURCE_RESULTS)
    )
    _ = (
        updated.quarantine
        | "GroupRefsByFile" >> beam.GroupByKey()
        | "WriteBucketQuarantine" >> beam.Map(write_bucket_quarantine, ctx, files)
    )
