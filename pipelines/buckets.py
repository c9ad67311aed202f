"""The per-bucket steps of a run: bring a job bucket's records up to date, then account its jobs.

A job bucket is a range of job hashes (`mpg.transforms.reconcile.hash_range`): every record of a
job lands in the same bucket, so each step sees whole jobs and needs no other shuffle. Both steps
read their inputs through the `OutputStore` and apply pure functions (`reconcile_jobs`,
`account_chip_time`); what a snapshot keeps of them is written by the pipeline's sinks
(`mpg.pipelines.sinks`), and what the next step needs goes on through the run's scratch, as
references.

`gather_bucket`, then `update_bucket` (per bucket with new records, or with jobs to rewrite): a
job's parsed records are read from the segment the job index names and joined by the new ones;
the bucket's changed jobs, whole, are its new segment (`Segment`, written by
`WriteRecordSegments`), and reconciled.

`AccountJobs` (per bucket, once the end of data over all buckets is known): the changed jobs, and
the open ones when the end of data moved, are accounted; their job-table rows go to scratch, one
batch per day, for `mpg.pipelines.days` to merge into the day partitions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.output.store import OutputStore, RunFiles
from mpg.pipelines.ingest import ParsedRef
from mpg.pipelines.sinks import Segment
from mpg.schemas import (
    JOB_INDEX,
    RECORD_ORDER,
    RECORD_SCHEMAS,
    SOURCES,
    STORED_SCHEMAS,
    concat,
)
from mpg.transforms.reconcile import JobRecords, hash_range, job_hash_of, reconcile_jobs

# A bucket's index rows: JOB_INDEX, whether the job is accounted again (not only moved), and
# whether the update step accounted it already (`settled`: a job that ended, whose rows the end
# of data cannot change; its output days are then set).
_UPDATED = pa.schema(
    [
        *JOB_INDEX,
        pa.field("accounted", pa.bool_(), nullable=False),
        pa.field("settled", pa.bool_(), nullable=False),
    ]
)
PLANNED = pa.schema(
    [
        pa.field("job_hash", pa.int64()),
        pa.field("job_id", pa.string()),
        pa.field("retracted", pa.bool_()),
    ]
)


@dataclass(frozen=True)
class RecordStore:
    """The record store as one run sees it."""

    run: RunFiles
    buckets: int
    index: str | None  # the previous snapshot's JOB_INDEX file; None: computing from scratch
    retracted: frozenset[str]  # input files whose records stop counting

    def previous_index(self, bucket: int) -> pa.Table:
        """The previous job index's rows of one bucket."""
        if self.index is None:
            return JOB_INDEX.empty_table()
        store = self.run.store
        return store.read_hash_range(self.index, JOB_INDEX, *hash_range(bucket, self.buckets))

    def history(self, bucket: int, index: pa.Table) -> dict[str, pa.Table]:
        """Every stored parsed record (STORED_SCHEMAS) of the jobs of `index` (JOB_INDEX rows of
        one bucket), less those of retracted files."""
        low, high = hash_range(bucket, self.buckets)
        retracted = pa.array(sorted(self.retracted), pa.string())
        tables = {}
        for source in SOURCES:
            schema = STORED_SCHEMAS[source]
            stored = index.filter(pc.greater(index.column(f"rows_{source}"), 0))
            parts = []
            for segment in sorted(set(stored.column("segment").to_pylist())):
                jobs = stored.filter(pc.equal(stored.column("segment"), segment)).column("job_id")
                store = self.run.store
                rows = store.read_hash_range(store.segment(source, segment), schema, low, high)
                keep = pc.and_(
                    pc.is_in(rows.column("job_id"), jobs),
                    pc.invert(pc.is_in(rows.column("file"), retracted)),
                )
                parts.append(rows.filter(keep))
            tables[source] = concat(parts, schema)
        return tables


@dataclass(frozen=True)
class BucketUpdate:
    """What `UpdateJobRecords` left in scratch for one bucket (references only)."""

    bucket: int
    records: str  # accepted records of its open jobs: scratch files' name (per source)
    jobs: str  # _UPDATED rows: every job the bucket rewrote
    data_end: int | None  # the latest accepted instant over all of the bucket's jobs (epoch µs)
    vanished: tuple[str, ...] = ()  # jobs whose records were all retracted: their rows go


def _read_refs(store: OutputStore, refs: Iterable[ParsedRef]) -> dict[str, pa.Table]:
    by_source: dict[str, list[pa.Table]] = {s: [] for s in SOURCES}
    for ref in refs:
        by_source[ref.source].append(store.read_scratch(ref.path, [ref.batch]))
    return {s: concat(by_source[s], STORED_SCHEMAS[s]) for s in SOURCES}


def _stored_order(records: pa.Table, source: str) -> pl.DataFrame:
    """Records in the record store's order: by job hash, then RECORD_ORDER (sorted by Polars,
    on all cores, and then handed to reconciling as they are)."""
    frame = pl.from_arrow(records)
    assert isinstance(frame, pl.DataFrame)
    return frame.sort(["job_hash", *RECORD_ORDER[source]])


def _us(values: pa.ChunkedArray) -> int | None:
    latest = pc.max(values.cast(pa.int64())).as_py()
    return None if latest is None else int(latest)


@dataclass(frozen=True)
class Updated:
    """One bucket brought up to date, in memory: what accounting it now still needs."""

    bucket: int
    jobs: pl.DataFrame  # _UPDATED rows of every job the bucket rewrote (no output days yet)
    accepted: JobRecords  # the accepted records of its accounted jobs and of its open ones
    index: pa.Table  # the previous JOB_INDEX rows of the bucket
    data_end: int | None  # the latest accepted instant over all of the bucket's jobs (epoch µs)
    vanished: tuple[str, ...]  # jobs whose records were all retracted
    refused: pa.Table  # QUARANTINE_REF: the records of its accounted jobs that were refused


@dataclass(frozen=True)
class Gathered:
    """One bucket's changed jobs' records, whole, in the store's order: its new segment."""

    bucket: int
    parsed: dict[str, pl.DataFrame]  # per source, with the job hash
    index: pa.Table  # the previous JOB_INDEX rows of the bucket
    accounted: pa.Array  # the jobs accounted again (new records, retracted ones)
    rewritten: pa.Array  # those and the jobs only moved (compacted segments)
    segment: str  # `RunFiles.segment_id`

    def segments(self) -> list[Segment]:
        """Its new record-store segment, a `Segment` per source with records."""
        return [Segment(self.segment, s, f) for s, f in self.parsed.items() if f.height]


def gather_bucket(records: RecordStore, bucket: int, inputs: Iterable[ParsedRef | str]) -> Gathered:
    """One bucket's changed jobs' records: `inputs` are its new parsed records and the scratch
    files naming jobs to rewrite (retracted files' jobs, compacted segments' jobs); their stored
    records are read from the segments the job index names. Writes nothing."""
    store = records.run.store
    inputs = list(inputs)
    new = _read_refs(store, [i for i in inputs if isinstance(i, ParsedRef)])
    planned = concat([store.read_scratch(p) for p in inputs if isinstance(p, str)], PLANNED)
    index = records.previous_index(bucket)
    accounted = pa.concat_arrays(
        [
            *(new[s].column("job_id").combine_chunks() for s in SOURCES),
            planned.filter(planned.column("retracted")).column("job_id").combine_chunks(),
        ]
    ).unique()
    rewritten = pa.concat_arrays([accounted, planned.column("job_id").combine_chunks()]).unique()
    old = index.filter(pc.is_in(index.column("job_id"), rewritten))
    history = records.history(bucket, old)
    parsed = {s: _stored_order(concat([history[s], new[s]], STORED_SCHEMAS[s]), s) for s in SOURCES}
    return Gathered(bucket, parsed, index, accounted, rewritten, records.run.segment_id(bucket))


def update_bucket(gathered: Gathered) -> Updated:
    """Bring one bucket's records up to date: its gathered records reconciled, job by job.
    Writes nothing: returns what accounting needs (`mpg.pipelines.accounting.settle_bucket`
    accounts what it can at once)."""
    parsed, index, segment = gathered.parsed, gathered.index, gathered.segment
    accounted, rewritten = gathered.accounted, gathered.rewritten
    reconciled = reconcile_jobs({s: parsed[s].drop("job_hash") for s in SOURCES}, in_job_order=True)
    jobs = reconciled.jobs
    updated = pl.from_arrow(jobs).with_columns(
        pl.lit(segment).alias("segment"),
        pl.col("job_id")
        .is_in(pl.Series(accounted.to_pylist(), dtype=pl.String).implode())
        .alias("accounted"),
        pl.lit(False).alias("settled"),
    )
    updated = updated.with_columns(
        pl.Series("job_hash", job_hash_of(jobs.column("job_id")).to_numpy()),
        pl.lit(None, pl.Date).alias("first_output_day"),
        pl.lit(None, pl.Date).alias("last_output_day"),
    )
    # Records of the jobs accounting may need: the accounted ones, and the open ones (accounted
    # too if the end of data moves).
    needed = pc.or_(pc.is_in(jobs.column("job_id"), accounted), jobs.column("open"))
    accepted = [reconciled.records.table(s) for s in SOURCES]
    if not pc.all(needed).as_py():  # a first run needs every job: no pass over the records
        accepted = [_only_jobs(t, jobs.column("job_id").filter(needed)) for t in accepted]
    refs = reconciled.quarantine.filter(pc.is_in(reconciled.quarantine.column("job_id"), accounted))
    untouched = index.filter(pc.invert(pc.is_in(index.column("job_id"), rewritten)))
    ends = [e for e in (_us(jobs.column("data_end")), _us(untouched.column("data_end"))) if e]
    gone = pc.invert(pc.is_in(accounted, jobs.column("job_id")))
    vanished = tuple(sorted(accounted.filter(gone).to_pylist()))
    end = max(ends) if ends else None
    return Updated(gathered.bucket, updated, JobRecords(*accepted), index, end, vanished, refs)


def _only_jobs(table: pa.Table, jobs: pa.Array | pa.ChunkedArray) -> pa.Table:
    return table.filter(pc.is_in(table.column("job_id"), jobs))


def write_records(run: RunFiles, name: str, records: JobRecords) -> None:
    """Accepted records in scratch, one file per source, for a later step of the run."""
    for source in SOURCES:
        run.store.write_scratch(run.accepted(name, source), [records.table(source)])


def read_records(run: RunFiles, name: str) -> JobRecords:
    """What `write_records` wrote."""
    read = run.store.read_scratch
    return JobRecords(**{s: read(run.accepted(name, s)).cast(RECORD_SCHEMAS[s]) for s in SOURCES})
