r"""The run's Beam pipeline: new trace files -> an updated record store and job tables.

    new files | ReadLineBlocks | ParseTraceRecords | WriteParseQuarantine
                                                   | DescribeFiles
    (parsed, retracted buckets) | UpdateJobBuckets | (with previous bucket ends) FindEndOfData
    (updates, idle buckets, end of data) | AccountChangedJobs  (mpg.pipelines.job_tables)
    updates | ValidateRecords (the source suites, on the records reconciled again)
    quarantine work | RecoverQuarantinedText

The staging folder starts as links to the previous snapshot (`layout.link_snapshot`); this pipeline
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
    update_bucket_records,
    write_bucket_quarantine,
)
from mpg.pipelines.io import TraceFile, read_line_blocks, write_parquet
from mpg.pipelines.job_tables import account_bucket
from mpg.pipelines.layout import SOURCE_RESULTS
from mpg.pipelines.state import CHANGED_DAYS, INGESTED, Plan, parse_quarantine_prefix
from mpg.transforms.parse import ParsedBlock
from mpg.transforms.reconcile import JobRecords, bucket_of
from mpg.transforms.steps import ParseTraceRecords, ValidateRecords, split_by_bucket

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


def write_json(rows: list, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, sort_keys=True, default=str))


def _write_ingested(stats: list[tuple[str, FileStats]], staging: str) -> None:
    rows = [
        {"name": n, "lines_read": s[0], "quarantined": s[1], "buckets": sorted(s[2])}
        for n, s in stats
    ]
    write_json(rows, Path(staging) / INGESTED)


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


class DescribeFiles(beam.PTransform):
    """ParsedBlocks -> `work/ingested.json`: per parsed file, what the manifest records."""

    def __init__(self, buckets: int, staging: str) -> None:
        super().__init__()
        self._buckets, self._staging = buckets, staging

    def expand(self, parsed):
        return (
            parsed
            | "DescribeBlocks" >> beam.Map(_describe, self._buckets)
            | "SumPerFile" >> beam.CombinePerKey(_add_stats)
            | "GatherFileStats" >> beam.combiners.ToList()
            | "WriteFileStats" >> beam.Map(_write_ingested, self._staging)
        )


class UpdateJobBuckets(beam.PTransform):
    """(ParsedBlocks, retracted bucket numbers) -> BucketUpdate per touched bucket (main output)
    and quarantine work per input file (`quarantine`). The only shuffle of records: Arrow tables,
    one per block and bucket."""

    def __init__(self, ctx: UpdateContext, buckets: int) -> None:
        super().__init__()
        self._ctx, self._buckets = ctx, buckets

    def expand(self, inputs):
        parsed, retracted = inputs
        return (
            (
                parsed | "KeyByJobBucket" >> beam.FlatMap(split_by_bucket, self._buckets),
                retracted | "KeyRetracted" >> beam.Map(lambda b: (b, None)),
            )
            | "TouchedBuckets" >> beam.Flatten()
            | "GroupByJobBucket" >> beam.GroupByKey()
            | "UpdateBucketRecords"
            >> beam.ParDo(_UpdateBuckets(self._ctx)).with_outputs("quarantine", main="updates")
        )


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


def _new_end(update: BucketUpdate) -> tuple[int, tuple]:
    return update.records.bucket, ("new", update.records.data_end)


def _old_end(bucket_end: tuple[int, int | None, int]) -> tuple[int, tuple]:
    bucket, end, open_jobs = bucket_end
    return bucket, ("old", end, open_jobs)


class FindEndOfData(beam.PTransform):
    """(BucketUpdates, previous (bucket, end, open jobs)) -> the end of data over every bucket
    (main output), and the untouched buckets with open jobs (`idle`)."""

    def expand(self, inputs):
        updates, previous = inputs
        ends = (
            (
                updates | "NewEnds" >> beam.Map(_new_end),
                previous | "OldEnds" >> beam.Map(_old_end),
            )
            | "AllBuckets" >> beam.Flatten()
            | "GroupBuckets" >> beam.GroupByKey()
            | "ResolveEnds" >> beam.FlatMap(_resolve_ends).with_outputs("idle", main="ends")
        )
        return ends.ends | "Latest" >> beam.CombineGlobally(_latest), ends.idle


class AccountChangedJobs(beam.PTransform):
    """(BucketUpdates, idle bucket numbers, end of data) -> `work/changed_days.json`: the job
    tables rewritten where their rows change."""

    def __init__(self, ctx: UpdateContext) -> None:
        super().__init__()
        self._ctx = ctx

    def expand(self, inputs):
        updates, idle, data_end = inputs
        return (
            (updates, idle)
            | "BucketsToAccount" >> beam.Flatten()
            | "AccountBucket"
            >> beam.FlatMap(account_bucket, self._ctx, beam.pvalue.AsSingleton(data_end))
            | "GatherChangedDays" >> beam.combiners.ToList()
            | "WriteChangedDays" >> beam.Map(write_json, self._ctx.out / CHANGED_DAYS)
        )


class RecoverQuarantinedText(beam.PTransform):
    """Quarantine work per input file -> `tables/quarantine/part-bNNNN-<file>.parquet`: each file
    read once, for the rows whose raw text is not known yet."""

    def __init__(self, ctx: UpdateContext, files: dict[str, TraceFile]) -> None:
        super().__init__()
        self._ctx, self._files = ctx, files

    def expand(self, work):
        return (
            work
            | "GroupByFile" >> beam.GroupByKey()
            | "WriteBucketQuarantine" >> beam.Map(write_bucket_quarantine, self._ctx, self._files)
        )


def _records(update: BucketUpdate) -> JobRecords:
    return update.records


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
    parsed = (
        p
        | "ListNewTraceFiles" >> beam.Create([f.file for f in plan.new])
        | "ReadLineBlocks" >> beam.FlatMap(read_line_blocks, block_bytes)
        | "ParseTraceRecords" >> ParseTraceRecords(ctx.catalog)
    )
    _ = parsed | "WriteParseQuarantine" >> beam.Map(_write_parse_quarantine, ctx.staging)
    _ = parsed | "DescribeFiles" >> DescribeFiles(buckets, ctx.staging)
    retracted = p | "ListRetractedBuckets" >> beam.Create(plan.retracted_buckets())
    updated = (parsed, retracted) | "UpdateJobBuckets" >> UpdateJobBuckets(ctx, buckets)
    previous = [] if plan.previous is None else plan.previous.bucket_ends()
    old_ends = p | "ListPreviousBuckets" >> beam.Create(previous)
    data_end, idle = (updated.updates, old_ends) | "FindEndOfData" >> FindEndOfData()
    _ = (updated.updates, idle, data_end) | "AccountChangedJobs" >> AccountChangedJobs(ctx)
    _ = (
        updated.updates
        | "ReconciledRecords" >> beam.Map(_records)
        | "ValidateRecords" >> ValidateRecords(ctx.catalog)
        | "WriteSourceResults" >> beam.Map(write_parquet, ctx.out / SOURCE_RESULTS)
    )
    _ = updated.quarantine | "RecoverQuarantinedText" >> RecoverQuarantinedText(ctx, files)
