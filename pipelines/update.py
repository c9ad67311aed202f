r"""The run's Beam pipeline: new trace files -> an updated record store and job-table partitions.

    new files | IngestTraceFiles -> (bucket, ParsedRef)            mpg.pipelines.ingest
    (parsed, planned jobs) | GroupByJobBucket | UpdateJobRecords     mpg.pipelines.buckets
        (+ `checked`: the bucket's source suites; `days`: its ended jobs' rows, accounted)
    (updates, previous buckets) | CoGroupByKey | EndOfData, BucketsToAccount
    (buckets, end of data) | AccountJobs -> (day, DayRef)            mpg.pipelines.accounting
    (day, DayRef) | MergeJobTableDays | WriteTableChanges            mpg.pipelines.days
    quarantine references | RecoverQuarantinedText                   mpg.pipelines.quarantine
    checked | CombineSourceResults | WriteSourceResults             mpg.quality
    files | WriteFileStats

Only references (scratch file names, batch numbers, day numbers) and small summaries cross a
shuffle or reach a side input: records move through files of the output folder, so a worker holds
one block or one bucket at a time and the runner's own memory does not grow with the fleet. The
same graph runs in-process, on worker processes, through Beam's portable job service and on
Dataflow; only the options differ. Step labels are stable (runners key state by them).

The pipeline ends in sinks (`Write...`): what the launcher then commits is what they wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa

from mpg.output.store import RunFiles
from mpg.pipelines.accounting import Accounting, AccountJobs, settle_bucket
from mpg.pipelines.buckets import BucketUpdate, RecordStore, update_bucket
from mpg.pipelines.days import DayChange, DayTables, MergeJobTableDays
from mpg.pipelines.ingest import FileStats, IngestTraceFiles
from mpg.pipelines.io import TraceFile
from mpg.pipelines.quarantine import QuarantineSources, RecoverQuarantinedText
from mpg.quality import BucketValidator, combine_results
from mpg.schemas import DATA_FILES, MANIFEST, VALIDATION_RESULTS

# What the sinks write: the names of the run's results (`RunFiles.result`).
FILE_STATS = "file-stats"
TABLE_CHANGES = "table-changes"
SOURCE_RESULTS = "source-results"


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
    block_bytes: int
    expectations: str  # the engine that checks the source suites (`mpg.quality.engine`)

    @property
    def run(self) -> RunFiles:
        return self.records.run

    @property
    def previous_end(self) -> int | None:
        """The end of data before this run: the latest of the previous buckets'."""
        return _latest(b.data_end for b in self.previous_buckets)


def _latest(values: Iterable[int | None]) -> int | None:
    return max((v for v in values if v is not None), default=None)


class _UpdateJobRecords(beam.DoFn):
    """`update_bucket`, then, on the records it accepted while they are in memory, the source
    suites and the accounting of the jobs that ended (`settle_bucket`). The validator is made
    once per worker (with Great Expectations, seconds)."""

    def __init__(self, records: RecordStore, accounting: Accounting, engine: str) -> None:
        self._records, self._accounting, self._engine = records, accounting, engine
        self._validator: BucketValidator | None = None

    def setup(self) -> None:
        self._validator = BucketValidator(self._accounting.catalog, self._engine)

    def process(self, element: tuple[int, Iterable]) -> Iterator:
        assert self._validator is not None
        bucket, inputs = element
        updated = update_bucket(self._records, bucket, inputs)
        yield beam.pvalue.TaggedOutput("checked", self._validator(updated.accepted))
        update, days = settle_bucket(self._records, self._accounting, updated)
        yield update
        for day in days:
            yield beam.pvalue.TaggedOutput("days", day)


def _keyed(update: BucketUpdate) -> tuple[int, BucketUpdate]:
    return update.bucket, update


def _refs_path(update: BucketUpdate, run: RunFiles) -> str:
    return run.quarantine_refs(update.bucket)


def _bucket_end(element: tuple[int, dict[str, list]]) -> int | None:
    """A bucket's end of data: its update's, else the previous index's."""
    _, found = element
    if found["update"]:
        return found["update"][0].data_end
    return found["previous"][0].data_end if found["previous"] else None


def _to_account(element: tuple[int, dict[str, list]]) -> Iterator[BucketUpdate | int]:
    """A bucket's update, or its number when nothing touched it but it has open jobs."""
    bucket, found = element
    if found["update"]:
        yield found["update"][0]
    elif found["previous"] and found["previous"][0].open_jobs:
        yield bucket


class _WriteTable(beam.PTransform):
    """A sink: every element of a small PCollection as rows of one of the run's results
    (`RunFiles.result`)."""

    def __init__(self, run: RunFiles, name: str, schema: pa.Schema, rows) -> None:
        super().__init__()
        self._run, self._name, self._schema, self._rows = run, name, schema, rows

    def expand(self, pcoll):
        return pcoll | "Gather" >> beam.combiners.ToList() | "Write" >> beam.Map(self._write)

    def _write(self, elements: list) -> None:
        table = pa.Table.from_pylist(self._rows(elements), schema=self._schema)
        self._run.store.write_parquet(table, self._run.result(self._name))


def _file_rows(stats: list[FileStats]) -> list[dict[str, object]]:
    return [s.row() for s in sorted(stats, key=lambda s: s.name)]


def _change_rows(changes: list[DayChange]) -> list[dict[str, object]]:
    rows = [{"table": c.table, "day": c.day, "path": c.path or "", "rows": c.rows} for c in changes]
    return sorted(rows, key=lambda r: (r["table"], r["day"]))


def _result_rows(parts: list[pa.Table]) -> list[dict[str, object]]:
    return [row for part in parts for row in part.to_pylist()]


def build_update(p: beam.Pipeline, plan: UpdatePlan) -> None:
    """Compose the update on `p`."""
    run = plan.run
    ingested = (
        p
        | "ListNewTraceFiles" >> beam.Create(list(plan.new))
        | "IngestTraceFiles"
        >> IngestTraceFiles(run, plan.accounting.catalog, plan.records.buckets, plan.block_bytes)
    )
    planned = p | "ListPlannedJobs" >> beam.Create(list(plan.planned))
    updated = (
        (ingested["parsed"], planned)
        | "BucketInputs" >> beam.Flatten()
        | "GroupByJobBucket" >> beam.GroupByKey()
        | "UpdateJobRecords"
        >> beam.ParDo(
            _UpdateJobRecords(plan.records, plan.accounting, plan.expectations)
        ).with_outputs("checked", "days", main="updates")
    )
    updates = updated.updates
    previous = p | "ListPreviousBuckets" >> beam.Create(
        [(b.bucket, b) for b in plan.previous_buckets]
    )
    buckets = {
        "update": updates | "KeyUpdates" >> beam.Map(lambda u: (u.bucket, u)),
        "previous": previous,
    } | "JoinBuckets" >> beam.CoGroupByKey()
    data_end = (
        buckets
        | "BucketEnds" >> beam.Map(_bucket_end)
        | "EndOfData" >> beam.CombineGlobally(_latest)
    )
    to_account = buckets | "BucketsToAccount" >> beam.FlatMap(_to_account)
    accounted = (to_account, data_end) | "AccountJobs" >> AccountJobs(
        plan.records, plan.accounting, plan.previous_end
    )
    repriced = p | "ListRepricedDays" >> beam.Create([(d, None) for d in plan.days.repriced])
    _ = (
        (updated.days, accounted["days"], repriced)
        | "DaysToMerge" >> beam.Flatten()
        | "MergeJobTableDays" >> MergeJobTableDays(plan.days)
        | "WriteTableChanges" >> _WriteTable(run, TABLE_CHANGES, _CHANGES, _change_rows)
    )
    checked = (
        updated.checked
        | "CombineSourceResults" >> beam.CombineGlobally(combine_results).without_defaults()
    )
    _ = checked | "WriteSourceResults" >> _WriteTable(
        run, SOURCE_RESULTS, VALIDATION_RESULTS, _result_rows
    )
    _ = (
        updates
        | "QuarantineRefs" >> beam.Map(_refs_path, run)
        | "RecoverQuarantinedText" >> RecoverQuarantinedText(plan.quarantine)
    )
    _ = ingested["files"] | "WriteFileStats" >> _WriteTable(run, FILE_STATS, MANIFEST, _file_rows)


# What `WriteTableChanges` writes: DATA_FILES with an empty path for a day that lost its file.
_CHANGES = DATA_FILES
