r"""The run's Beam pipeline: new trace files -> an updated record store and job-table partitions.

The steps compute; the sinks at the end of the graph write what the run keeps:

    new files' parts | IngestTraceFiles -> (bucket, ParsedRef)        mpg.pipelines.ingest
    (parsed, planned jobs) | GroupByJobBucket | UpdateJobRecords        mpg.pipelines.buckets
        -> BucketUpdate; `segments`: its new record-store segment; `checked`: the bucket's source
           suites; `days`: its ended jobs' rows, accounted                mpg.pipelines.accounting
    (updates, previous buckets) | JoinBuckets | BucketEnds, BucketsToAccount
    (buckets, their ends of data) | AccountJobs -> (day, DayRef)        mpg.pipelines.accounting
    (day, DayRef) | MergeJobTableDays -> DayRows                        mpg.pipelines.days
    updates | QuarantineRefs | RecoverQuarantinedText                   mpg.pipelines.quarantine
  sinks                                                                 mpg.pipelines.sinks
    segments | WriteRecordSegments -> SEGMENTS rows   records/<source>/<segment>.parquet
    DayRows  | WriteDayFiles | WriteTableChanges      tables/<table>/data/day=D/<run>-0.parquet
    checked | WriteSourceResults;  files | WriteFileStats      (results, for the launcher)
    (files, index parts, SEGMENTS rows, updates, refused, recovered)
             | WriteSnapshotState                     state/<run>/, quarantine, record_counts,
               (one list of references, one step)     cost_rates          mpg.pipelines.finish

Only references (scratch file names, batch numbers, day numbers) and small summaries cross a
shuffle or reach a side input: records move through files of the output folder, so a worker holds
one block or one bucket at a time and the runner's own memory does not grow with the fleet. A
step hands the tables it computed to its sink in memory, in the same fused stage (a ParDo after a
ParDo). The same graph runs in-process, on worker processes, through Beam's portable job service
and on Dataflow; only the options differ. Step labels are stable (runners key state by them).

The launcher then only commits what the sinks wrote (`mpg.pipelines.publish`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa

from mpg.output.store import RunFiles
from mpg.pipelines.accounting import Accounting, AccountJobs, latest, settle_bucket
from mpg.pipelines.buckets import BucketUpdate, RecordStore, gather_bucket, update_bucket
from mpg.pipelines.days import DayTables, MergeJobTableDays
from mpg.pipelines.finish import StatePlan, WriteSnapshotState
from mpg.pipelines.ingest import IngestTraceFiles, file_rows
from mpg.pipelines.io import TraceFile, file_parts
from mpg.pipelines.quarantine import QuarantineSources, RecoverQuarantinedText
from mpg.pipelines.sinks import (
    FILE_STATS,
    SOURCE_RESULTS,
    Segment,
    WriteDayFiles,
    WriteRecordSegments,
    WriteResult,
    WriteTableChanges,
)
from mpg.quality import BucketValidator, combine_results
from mpg.schemas import MANIFEST, VALIDATION_RESULTS


@dataclass(frozen=True)
class PreviousBucket:
    """A bucket of this run's layout as the previous job index has it."""

    bucket: int
    data_end: int | None  # the latest accepted instant of its jobs
    open_jobs: int


@dataclass(frozen=True)
class UpdatePlan:
    """Everything the pipeline is built from: decided by the launcher before it starts. The
    run's files (`run`) are those of its record store; `days` holds the days to price again."""

    new: tuple[TraceFile, ...]
    planned: tuple[tuple[int, str], ...]  # (bucket, scratch file of jobs to rewrite)
    previous_buckets: tuple[PreviousBucket, ...]
    records: RecordStore
    accounting: Accounting
    days: DayTables
    quarantine: QuarantineSources
    state: StatePlan  # what the new snapshot's state is merged from
    block_bytes: int
    expectations: str  # the engine that checks the source suites (`mpg.quality.engine`)

    @property
    def run(self) -> RunFiles:
        return self.records.run

    @property
    def previous_end(self) -> int | None:
        """The end of data before this run: the latest of the previous buckets'."""
        return latest(b.data_end for b in self.previous_buckets)


class _UpdateBucket(beam.DoFn):
    """`gather_bucket`, its segment handed to the sink at once (in the same stage: as a call, so
    it is written before the records are reconciled, as when the step wrote it), `update_bucket`,
    then, on the records it accepted while they are in memory, the source suites and the
    accounting of the jobs that ended (`settle_bucket`). The validator is made once per worker
    (with Great Expectations, seconds)."""

    def __init__(self, records: RecordStore, accounting: Accounting, engine: str) -> None:
        self._records, self._accounting, self._engine = records, accounting, engine
        self._validator: BucketValidator | None = None

    def setup(self) -> None:
        self._validator = BucketValidator(self._accounting.catalog, self._engine)

    def process(self, element: tuple[int, Iterable]) -> Iterator:
        assert self._validator is not None
        bucket, inputs = element
        gathered = gather_bucket(self._records, bucket, inputs)
        for segment in gathered.segments():
            yield beam.pvalue.TaggedOutput("segments", segment)
        updated = update_bucket(gathered)
        del gathered
        yield beam.pvalue.TaggedOutput("checked", self._validator(updated.accepted))
        update, days = settle_bucket(self._records, self._accounting, updated)
        yield update
        for day in days:
            yield beam.pvalue.TaggedOutput("days", day)


class UpdateJobRecords(beam.PTransform):
    """(bucket, its ParsedRefs and planned jobs' scratch files) -> BucketUpdate (`updates`), the
    bucket's new record-store segments (`segments`: `Segment`, for `WriteRecordSegments`), the
    source suites' results (`checked`) and the (day, DayRef) of the jobs it settled (`days`)."""

    def __init__(self, records: RecordStore, accounting: Accounting, engine: str) -> None:
        super().__init__()
        self._records, self._accounting, self._engine = records, accounting, engine

    def expand(self, inputs):
        update = beam.ParDo(_UpdateBucket(self._records, self._accounting, self._engine))
        # `segments`: a type with its own coder (`mpg.pipelines.sinks`), never encoded
        anything = beam.typehints.Any
        typed = update.with_output_types(
            anything, segments=Segment, checked=anything, days=anything
        )
        return inputs | "UpdateBucket" >> typed.with_outputs(
            "segments", "checked", "days", main="updates"
        )


def _keyed(update: BucketUpdate) -> tuple[int, BucketUpdate]:
    return update.bucket, update


def _refs_path(update: BucketUpdate, run: RunFiles) -> str:
    return run.quarantine_refs(update.bucket)


def _bucket_end(element: tuple[int, dict[str, list]]) -> int | None:
    """A bucket's end of data: its update's, else the previous index's."""
    _, found = element
    if found["update"]:
        return found["update"][0].data_end
    previous = found.get("previous")
    return previous[0].data_end if previous else None


def _to_account(element: tuple[int, dict[str, list]]) -> Iterator[BucketUpdate | int]:
    """A bucket's update, or its number when nothing touched it but it has open jobs."""
    bucket, found = element
    previous = found.get("previous")
    if found["update"]:
        yield found["update"][0]
    elif previous and previous[0].open_jobs:
        yield bucket


def _listed(p: beam.Pipeline, label: str, items: Sequence) -> list[beam.PCollection]:
    """`items` as a PCollection, in a list of one; an empty list when there are none."""
    return [p | label >> beam.Create(list(items))] if items else []


def _result_rows(parts: list[pa.Table]) -> list[dict[str, object]]:
    """The buckets' source suites' results, added up where they are written (one step less than
    a CombineGlobally before the write)."""
    return combine_results(parts).to_pylist()


def build_update(p: beam.Pipeline, plan: UpdatePlan) -> None:
    """Compose the update on `p`."""
    run = plan.run
    ingested = (
        p
        | "ListNewTraceFiles" >> beam.Create(file_parts(plan.new, plan.block_bytes))
        | "IngestTraceFiles"
        >> IngestTraceFiles(run, plan.accounting.catalog, plan.records.buckets, plan.block_bytes)
    )
    # A list with nothing in it is left out of the graph: each `Create` is a stage of its own
    # (10-30 ms on Beam's local runner), and most runs have no jobs to rewrite, a first run no
    # previous buckets, and a run whose prices did not change no days to price again.
    planned = _listed(p, "ListPlannedJobs", plan.planned)
    updated = (
        (ingested["parsed"], *planned)
        | "BucketInputs" >> beam.Flatten()
        | "GroupByJobBucket" >> beam.GroupByKey()
        | "UpdateJobRecords" >> UpdateJobRecords(plan.records, plan.accounting, plan.expectations)
    )
    updates = updated.updates
    previous = _listed(p, "ListPreviousBuckets", [(b.bucket, b) for b in plan.previous_buckets])
    by_bucket = {"update": updates | "KeyUpdates" >> beam.Map(_keyed)}
    if previous:
        by_bucket["previous"] = previous[0]
    buckets = by_bucket | "JoinBuckets" >> beam.CoGroupByKey()
    ends = buckets | "BucketEnds" >> beam.Map(_bucket_end)
    to_account = buckets | "BucketsToAccount" >> beam.FlatMap(_to_account)
    accounted = (to_account, ends) | "AccountJobs" >> AccountJobs(
        plan.records, plan.accounting, plan.previous_end
    )
    repriced = _listed(p, "ListRepricedDays", [(d, None) for d in plan.days.repriced])
    days = (
        (updated.days, accounted["days"], *repriced)
        | "DaysToMerge" >> beam.Flatten()
        | "MergeJobTableDays" >> MergeJobTableDays(plan.days)
    )
    recovered = (
        updates
        | "QuarantineRefs" >> beam.Map(_refs_path, run)
        | "RecoverQuarantinedText" >> RecoverQuarantinedText(plan.quarantine)
    )
    # The sinks (mpg.pipelines.sinks): the records and tables the run keeps, and the references
    # to them and the run's small summaries, for the launcher; then the snapshot's state, merged
    # with the previous one's (mpg.pipelines.finish).
    segments = updated.segments | "WriteRecordSegments" >> WriteRecordSegments(run)
    changes = days | "WriteDayFiles" >> WriteDayFiles(run)
    _ = changes | "WriteTableChanges" >> WriteTableChanges(run)
    _ = updated.checked | "WriteSourceResults" >> WriteResult(
        run, SOURCE_RESULTS, VALIDATION_RESULTS, _result_rows
    )
    _ = ingested["files"] | "WriteFileStats" >> WriteResult(run, FILE_STATS, MANIFEST, file_rows)
    _ = {
        "files": ingested["files"],
        "index": accounted["jobs"],
        "segments": segments,
        "updates": updates,
        "refused": ingested["refused"],
        "recovered": recovered,
    } | "WriteSnapshotState" >> WriteSnapshotState(plan.state)
