"""Bringing one job bucket up to date: its parsed records, record store and quarantine.

A run's staging folder starts as hard links to the previous snapshot's files (`link_snapshot`).
Each step here reads the previous snapshot (never the staging folder, so a retried bundle sees
the same input) and replaces, in staging, exactly the files whose content changes. Files are
always replaced by rename (`mpg.pipelines.io.write_parquet`), so a link is never written through.

Per touched bucket (one that new or retracted records fall in):
1. `update_bucket_records`: the bucket's live parsed records (previous segments less retracted
   files' rows, plus this run's) are reconciled again as a whole, which is cheap; the record store
   is rewritten on the days that the changed jobs' records occupy, before or after.
2. `account_bucket` (`mpg.pipelines.job_tables`): only the changed jobs are accounted again, plus
   the open ones when the end of data moves; job tables are rewritten on days whose rows change.
A bucket that nothing touched is accounted again only for its open jobs, and only if the end of
data moved.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mpg.catalog import ChipCatalog
from mpg.pipelines.io import (
    TraceFile,
    day_of,
    read_parquet,
    record_store_file,
    recover_raw_text,
    stable_id,
    write_parquet,
)
from mpg.pipelines.state import (
    MAX_SEGMENTS,
    Coverage,
    bucket_state_file,
    segment_folder,
)
from mpg.schemas import (
    BUCKET_STATE,
    DAY_COLUMN,
    QUARANTINE,
    RECORD_SCHEMAS,
    SOURCES,
    TABLE_KEYS,
    UTC_US,
    concat,
    conform,
)
from mpg.transforms.reconcile import BucketRecords, JobRecords, reconcile_bucket

_FILES_KEY = b"mpg.files"  # a segment's footer: {input file name: content hash} of its rows


@dataclass(frozen=True)
class UpdateContext:
    """What every bucket step of one run needs to know; small, and pickled once per step."""

    staging: str
    previous: str | None  # the previous snapshot; None when computing from scratch
    run_id: str
    live: dict[str, str]  # every input file's content hash, by name
    new: frozenset[str]  # the names this run parses
    catalog: ChipCatalog
    metric_versions: tuple[str, ...]  # every version a recomputed job gets rows of
    previous_data_end: int | None
    coverage: Coverage = ()  # backfilled versions: their rows only on these days

    @property
    def out(self) -> Path:
        return Path(self.staging)

    @property
    def old(self) -> Path | None:
        return None if self.previous is None else Path(self.previous)


@dataclass(frozen=True)
class BucketUpdate:
    """A touched bucket after reconciling: all its accepted records and what changed in it."""

    records: JobRecords
    changed_jobs: tuple[str, ...]  # jobs whose parsed records changed
    open_jobs: tuple[str, ...]  # jobs with no JOB_END: their chip-time runs to the end of data


def _jobs(tables: Iterable[pa.Table]) -> set[str]:
    return {j for t in tables for j in pc.unique(t.column("job_id")).to_pylist()}


def only_jobs(table: pa.Table, jobs: Iterable[str]) -> pa.Table:
    return table.filter(pc.is_in(table.column("job_id"), pa.array(sorted(jobs), pa.string())))


def without_jobs(table: pa.Table, jobs: Iterable[str]) -> pa.Table:
    keep = pc.invert(pc.is_in(table.column("job_id"), pa.array(sorted(jobs), pa.string())))
    return table.filter(keep)


def _stored_rows(ctx: UpdateContext, source: str, bucket: int) -> tuple[pa.Table, pa.Table, int]:
    """The previous segments' rows of one source and bucket: (live, retracted, segment count)."""
    schema = RECORD_SCHEMAS[source]
    if ctx.old is None:
        return schema.empty_table(), schema.empty_table(), 0
    live, dead = [], []
    segments = sorted(segment_folder(ctx.old, source, bucket).glob("seg-*.parquet"))
    for segment in segments:
        files = json.loads(pq.read_schema(segment).metadata[_FILES_KEY])
        names = [n for n, sha in files.items() if ctx.live.get(n) == sha]
        table = read_parquet(segment, schema)
        keep = pc.is_in(table.column("file"), pa.array(names, pa.string()))
        live.append(table.filter(keep))
        dead.append(table.filter(pc.invert(keep)))
    return concat(live, schema), concat(dead, schema), len(segments)


def _write_segment(ctx: UpdateContext, source: str, bucket: int, rows: pa.Table) -> None:
    """Parsed records as one segment, sorted by job (readers can then skip row groups)."""
    if rows.num_rows == 0:
        return
    names = sorted(pc.unique(rows.column("file")).to_pylist())
    files = json.dumps({n: ctx.live[n] for n in names}, sort_keys=True).encode()
    schema = RECORD_SCHEMAS[source]
    schema = schema.with_metadata({**schema.metadata, _FILES_KEY: files})
    rows = rows.sort_by([("job_id", "ascending"), ("file", "ascending"), ("line", "ascending")])
    write_parquet(
        rows.cast(schema), segment_folder(ctx.out, source, bucket) / f"seg-{ctx.run_id}.parquet"
    )


def _update_parsed_store(
    ctx: UpdateContext, bucket: int, new: dict[str, pa.Table]
) -> tuple[dict[str, pa.Table], dict[str, pa.Table]]:
    """Add this run's records to the parsed store; returns every live and every retracted row.

    A source folder is compacted into one segment when it holds retracted rows or too many
    segments: its live rows are read anyway, so compaction costs one write.
    """
    rows, dead = {}, {}
    for source in SOURCES:
        live, dead[source], segments = _stored_rows(ctx, source, bucket)
        rows[source] = concat([live, new[source]], RECORD_SCHEMAS[source])
        if dead[source].num_rows or segments >= MAX_SEGMENTS:
            for old in segment_folder(ctx.out, source, bucket).glob("seg-*.parquet"):
                old.unlink()
            _write_segment(ctx, source, bucket, rows[source])
        else:
            _write_segment(ctx, source, bucket, new[source])
    return rows, dead


def days_present(table: pa.Table, column: str) -> set[datetime.date]:
    return set(pc.unique(day_of(table.column(column))).to_pylist()) if table.num_rows else set()


def _write_record_days(ctx: UpdateContext, records: JobRecords, days: dict[str, set]) -> None:
    """Rewrite the record store's files of this bucket on the given days, per source."""
    for source, wanted in days.items():
        table = records.table(source)
        table_days = day_of(table.column(DAY_COLUMN[source]))
        for day in sorted(wanted):
            path = (
                ctx.out
                / "records"
                / f"source={source}"
                / f"day={day.isoformat()}"
                / record_store_file(records.bucket)
            )
            part = table.filter(pc.equal(table_days, pa.scalar(day, pa.date32())))
            if part.num_rows:
                write_parquet(part, path)
            else:
                path.unlink(missing_ok=True)


def open_jobs(scheduler: pa.Table) -> tuple[str, ...]:
    """Jobs with an accepted JOB_SUBMIT and no accepted JOB_END."""
    types = scheduler.column("type")
    submitted = _jobs([scheduler.filter(pc.equal(types, "JOB_SUBMIT"))])
    ended = _jobs([scheduler.filter(pc.equal(types, "JOB_END"))])
    return tuple(sorted(submitted - ended))


def _write_bucket_state(ctx: UpdateContext, reconciled: BucketRecords, open_: int) -> None:
    """The bucket's BUCKET_STATE rows; none once nothing of the bucket is left."""
    path = bucket_state_file(ctx.out, reconciled.records.bucket)
    counts = reconciled.counts
    if not any(c.accepted or c.duplicates or c.quarantined for c in counts):
        path.unlink(missing_ok=True)
        return
    n = len(counts)
    columns = {
        "bucket": pa.array([reconciled.records.bucket] * n, pa.int32()),
        "source": [c.source for c in counts],
        "accepted": [c.accepted for c in counts],
        "duplicates": [c.duplicates for c in counts],
        "quarantined": [c.quarantined for c in counts],
        "data_end": pa.array([reconciled.records.data_end] * n, pa.int64()).cast(UTC_US),
        "open_jobs": [open_] * n,
    }
    write_parquet(pa.table(columns).cast(BUCKET_STATE), path)


def update_bucket_records(
    ctx: UpdateContext, bucket: int, parts: Iterable[tuple[str, pa.Table] | None]
) -> Iterator[BucketUpdate | tuple[str, tuple[int, pa.Table, pa.Table]]]:
    """Reconcile a touched bucket again; yields its BucketUpdate, then its quarantine work
    as (input file name, (bucket, references to read, rows whose text is known)) per file."""
    by_source: dict[str, list[pa.Table]] = {s: [] for s in SOURCES}
    for part in parts:
        if part is not None:  # None: the bucket is touched only by retracted files
            by_source[part[0]].append(part[1])
    new = {s: concat(by_source[s], RECORD_SCHEMAS[s]) for s in SOURCES}
    rows, dead = _update_parsed_store(ctx, bucket, new)
    reconciled = reconcile_bucket(bucket, rows)
    changed = _jobs([*new.values(), *dead.values()])
    days = {
        s: days_present(
            only_jobs(concat([rows[s], dead[s]], RECORD_SCHEMAS[s]), changed), DAY_COLUMN[s]
        )
        for s in SOURCES
    }
    _write_record_days(ctx, reconciled.records, days)
    open_ = open_jobs(reconciled.records.scheduler)
    _write_bucket_state(ctx, reconciled, len(open_))
    yield BucketUpdate(reconciled.records, tuple(sorted(changed)), open_)
    yield from _quarantine_work(ctx, bucket, reconciled.quarantine)


def _bucket_quarantine_files(root: Path, bucket: int) -> list[Path]:
    return sorted((root / "tables" / "quarantine").glob(f"part-b{bucket:04d}-*.parquet"))


def _quarantine_work(
    ctx: UpdateContext, bucket: int, refs: pa.Table
) -> Iterator[tuple[str, tuple[int, pa.Table, pa.Table]]]:
    """The bucket's quarantine references, split by the input file they point into.

    A reference into a file ingested before and unchanged keeps the raw text the previous
    snapshot recovered; the others are read from their file (`write_bucket_quarantine`).
    """
    for path in _bucket_quarantine_files(ctx.out, bucket):
        path.unlink()
    old = pl.from_arrow(
        concat(
            (read_parquet(p, QUARANTINE) for p in _bucket_quarantine_files(ctx.old, bucket))
            if ctx.old
            else [],
            QUARANTINE,
        )
    )
    unchanged = [n for n in ctx.live if n not in ctx.new]
    old = old.filter(pl.col("file").is_in(unchanged))
    frame = pl.from_arrow(refs)
    key = ["source", "file", "line", "reason"]
    known = frame.join(old, on=key, how="inner")
    unknown = frame.join(old, on=key, how="anti")
    for name in sorted(frame.get_column("file").unique().to_list()):
        yield (
            name,
            (
                bucket,
                unknown.filter(pl.col("file") == name).to_arrow(),
                conform(known.filter(pl.col("file") == name).to_arrow(), QUARANTINE),
            ),
        )


def write_bucket_quarantine(
    grouped: tuple[str, Iterable[tuple[int, pa.Table, pa.Table]]],
    ctx: UpdateContext,
    files: dict[str, TraceFile],
) -> None:
    """One input file's quarantine rows for every bucket that references it: the file is read at
    most once, for the references whose raw text is not known yet."""
    name, work = grouped
    work = sorted(work, key=lambda w: w[0])
    wanted = pa.concat_tables([w[1] for w in work])
    # recover_raw_text keeps the references' order: each bucket's rows are a run of them.
    recovered = recover_raw_text(files[name], wanted) if wanted.num_rows else None
    start = 0
    for bucket, refs, known in work:
        parts = [known]
        if recovered is not None:
            parts.append(recovered.slice(start, refs.num_rows))
        start += refs.num_rows
        rows = concat(parts, QUARANTINE).sort_by(
            [(k, "ascending") for k in TABLE_KEYS["quarantine"]]
        )
        out = ctx.out / "tables" / "quarantine" / f"part-b{bucket:04d}-{stable_id(name)}.parquet"
        write_parquet(rows, out)
