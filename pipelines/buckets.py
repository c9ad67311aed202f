"""Bringing one job bucket up to date: its parsed records, record store, job tables and quarantine.

A run's staging folder starts as hard links to the previous snapshot's files (`link_previous`).
Each step here reads the previous snapshot (never the staging folder, so a retried bundle sees
the same input) and replaces, in staging, exactly the files whose content changes. Files are
always replaced by rename (`mpg.pipelines.io.write_parquet`), so a link is never written through.

Per touched bucket (one that new or retracted records fall in):
1. `update_bucket_records`: the bucket's live parsed records (previous segments less retracted
   files' rows, plus this run's) are reconciled again as a whole, which is cheap; the record store
   is rewritten on the days that the changed jobs' records occupy, before or after.
2. `account_bucket`: only the changed jobs are accounted again, plus the open ones when the end
   of data moves; the job tables are rewritten on the days whose rows change.
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
    job_index_file,
    segment_folder,
)
from mpg.schemas import (
    BUCKET_STATE,
    DAY_COLUMN,
    JOB_INDEX,
    QUARANTINE,
    RECORD_SCHEMAS,
    SOURCES,
    TABLE_KEYS,
    TABLES,
    UTC_US,
    concat,
    conform,
)
from mpg.transforms.account import account_chip_time
from mpg.transforms.reconcile import BucketRecords, JobRecords, reconcile_bucket

_FILES_KEY = b"mpg.files"  # a segment's footer: {input file name: content hash} of its rows
JOB_TABLES = ("job_day_goodput", "chip_time_ledger")


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


def _only(table: pa.Table, jobs: Iterable[str]) -> pa.Table:
    return table.filter(pc.is_in(table.column("job_id"), pa.array(sorted(jobs), pa.string())))


def _without(table: pa.Table, jobs: Iterable[str]) -> pa.Table:
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


def _days(table: pa.Table, column: str) -> set[datetime.date]:
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
        s: _days(_only(concat([rows[s], dead[s]], RECORD_SCHEMAS[s]), changed), DAY_COLUMN[s])
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
    owner = pa.array([w[0] for w in work for _ in range(w[1].num_rows)], pa.int32())
    recovered = recover_raw_text(files[name], wanted) if wanted.num_rows else None
    for bucket, _, known in work:
        parts = [known]
        if recovered is not None:
            parts.append(recovered.filter(pc.equal(owner, bucket)))
        rows = concat(parts, QUARANTINE).sort_by(
            [(k, "ascending") for k in TABLE_KEYS["quarantine"]]
        )
        out = ctx.out / "tables" / "quarantine" / f"part-b{bucket:04d}-{stable_id(name)}.parquet"
        write_parquet(rows, out)


def _read_optional(path: Path | None, schema: pa.Schema) -> pa.Table:
    return (
        read_parquet(path, schema) if path is not None and path.exists() else schema.empty_table()
    )


def _day_range(first: datetime.date, last: datetime.date) -> Iterator[datetime.date]:
    for offset in range((last - first).days + 1):
        yield first + datetime.timedelta(days=offset)


def _indexed_days(index: pa.Table, first: str, last: str) -> set[datetime.date]:
    days: set[datetime.date] = set()
    for row in index.select([first, last]).to_pylist():
        if row[first] is not None:
            days.update(_day_range(row[first], row[last]))
    return days


def _read_jobs(ctx: UpdateContext, bucket: int, index: pa.Table) -> JobRecords:
    """The accepted records of the jobs in `index` (JOB_INDEX rows), from the previous snapshot's
    record store: only the days the index says they occupy are read."""
    assert ctx.old is not None
    jobs = index.column("job_id").to_pylist()
    days = _indexed_days(index, "first_record_day", "last_record_day")
    tables = {}
    for source in SOURCES:
        folder = ctx.old / "records" / f"source={source}"
        paths = [folder / f"day={d.isoformat()}" / record_store_file(bucket) for d in sorted(days)]
        schema = RECORD_SCHEMAS[source]
        stored = concat((read_parquet(p, schema) for p in paths if p.exists()), schema)
        tables[source] = _only(stored, jobs)
    return JobRecords(bucket=bucket, **tables)


def _previous_index(ctx: UpdateContext, bucket: int) -> pa.Table:
    return _read_optional(None if ctx.old is None else job_index_file(ctx.old, bucket), JOB_INDEX)


def read_open_jobs(ctx: UpdateContext, bucket: int) -> BucketUpdate:
    """An untouched bucket's open jobs and their accepted records, from the previous snapshot."""
    index = _previous_index(ctx, bucket)
    index = index.filter(index.column("open"))
    records = _read_jobs(ctx, bucket, index)
    return BucketUpdate(records, (), tuple(index.column("job_id").to_pylist()))


def _replaced(old: pa.Table, jobs: set[str], versions: frozenset[str] | None) -> pa.Table:
    """`old` less the rows of `jobs` (of `versions` only, when given) that are being replaced."""
    if versions is None:
        return _without(old, jobs)
    mine = pc.and_(
        pc.is_in(old.column("job_id"), pa.array(sorted(jobs), pa.string())),
        pc.is_in(old.column("metric_version"), pa.array(sorted(versions), pa.string())),
    )
    return old.filter(pc.invert(mine))


def _merge_day(
    ctx: UpdateContext,
    table: str,
    day: datetime.date,
    bucket: int,
    replace: tuple[set[str], frozenset[str] | None],
    rows: pa.Table,
) -> bool:
    """Replace rows (of `replace`: jobs, and versions or all) in one day's file of a job table
    by `rows`; True if the file's content changed."""
    relative = Path("tables") / table / f"day={day.isoformat()}" / f"part-b{bucket:04d}.parquet"
    schema = TABLES[table]
    old = _read_optional(None if ctx.old is None else ctx.old / relative, schema)
    merged = concat([_replaced(old, *replace), rows], schema)
    merged = merged.sort_by([(k, "ascending") for k in TABLE_KEYS[table]])
    if merged.equals(old):
        return False
    if merged.num_rows:
        write_parquet(merged, ctx.out / relative)
    else:
        (ctx.out / relative).unlink(missing_ok=True)
    return True


def _merge_days(
    ctx: UpdateContext,
    bucket: int,
    replace: tuple[set[str], frozenset[str] | None],
    days: Iterable[datetime.date],
    tables: tuple[pa.Table, pa.Table],
) -> Iterator[tuple[str, datetime.date]]:
    """Merge new job-table rows into each of `days`; yields each (table, day) that changed."""
    for table, rows in zip(JOB_TABLES, tables, strict=True):
        day_of_rows = rows.column("day")
        for day in sorted(days):
            part = rows.filter(pc.equal(day_of_rows, pa.scalar(day, pa.date32())))
            if _merge_day(ctx, table, day, bucket, replace, part):
                yield table, day


def _in_coverage(rows: pa.Table, coverage: Coverage) -> pa.Table:
    """Rows of backfilled versions only on the days each is backfilled over."""
    for version, spans in coverage:
        inside = pc.equal(rows.column("metric_version"), version)
        within = pa.array([False] * rows.num_rows)
        for first, last in spans:
            days = rows.column("day")
            within = pc.or_(
                within, pc.and_(pc.greater_equal(days, first), pc.less_equal(days, last))
            )
        rows = rows.filter(pc.or_(pc.invert(inside), within))
    return rows


def _account(
    ctx: UpdateContext, records: JobRecords, data_end: int | None, versions: tuple[str, ...]
) -> tuple[pa.Table, pa.Table]:
    """Job-day goodput and ledger rows of `records` for `versions`, within the coverage."""
    if not records.scheduler.num_rows or data_end is None:  # all retracted
        return TABLES["job_day_goodput"].empty_table(), TABLES["chip_time_ledger"].empty_table()
    job_days, ledger = account_chip_time(
        records.scheduler, records.runtime, records.profiles, ctx.catalog, data_end, versions
    )
    return _in_coverage(job_days, ctx.coverage), _in_coverage(ledger, ctx.coverage)


def _index_rows(update: BucketUpdate, jobs: set[str], job_days: pa.Table) -> pa.Table:
    """JOB_INDEX rows for the accounted jobs that still have records."""
    frames = [
        pl.from_arrow(
            _only(update.records.table(s), jobs).select(["job_id", DAY_COLUMN[s]])
        ).select("job_id", pl.col(DAY_COLUMN[s]).dt.date().alias("day"))
        for s in SOURCES
    ]
    records = (
        pl.concat(frames)
        .group_by("job_id")
        .agg(
            pl.col("day").min().alias("first_record_day"),
            pl.col("day").max().alias("last_record_day"),
        )
    )
    outputs = (
        pl.from_arrow(job_days.select(["job_id", "day"]))
        .group_by("job_id")
        .agg(
            pl.col("day").min().alias("first_output_day"),
            pl.col("day").max().alias("last_output_day"),
        )
    )
    open_ = pl.Series("job_id", list(update.open_jobs), pl.String)
    index = records.join(outputs, on="job_id", how="left").with_columns(
        pl.col("job_id").is_in(open_.implode()).alias("open")
    )
    return conform(index.to_arrow(), JOB_INDEX)


def account_bucket(
    item: BucketUpdate | int, ctx: UpdateContext, data_end: int | None
) -> Iterator[tuple[str, datetime.date]]:
    """Account a bucket's changed jobs again and merge them into the job tables; yields each
    (table, day) whose rows changed. `item` is a touched bucket's update, or the number of an
    untouched bucket with open jobs."""
    moved = data_end != ctx.previous_data_end
    if isinstance(item, int):
        if not moved:
            return
        item = read_open_jobs(ctx, item)
    update = item
    bucket = update.records.bucket
    jobs = set(update.changed_jobs) | (set(update.open_jobs) if moved else set())
    if not jobs:
        return
    records = JobRecords(bucket, **{s: _only(update.records.table(s), jobs) for s in SOURCES})
    job_days, ledger = _account(ctx, records, data_end, ctx.metric_versions)
    old_index = _previous_index(ctx, bucket)
    days = _indexed_days(_only(old_index, jobs), "first_output_day", "last_output_day")
    days |= _days(job_days, "day")
    yield from _merge_days(ctx, bucket, (jobs, None), days, (job_days, ledger))
    index = concat([_without(old_index, jobs), _index_rows(update, jobs, job_days)], JOB_INDEX)
    index = index.sort_by("job_id")
    path = job_index_file(ctx.out, bucket)
    if index.num_rows:
        write_parquet(index, path)
    else:
        path.unlink(missing_ok=True)


def backfill_bucket(
    bucket: int, ctx: UpdateContext, version: str, first: datetime.date, last: datetime.date
) -> Iterator[tuple[str, datetime.date]]:
    """Recompute `version`'s rows of one bucket on days first..last from the record store (the
    raw logs are not read); yields each (table, day) that changed. Every job with job-day rows
    in the range is accounted whole (a day's ledger can depend on later days: lost steps), with
    the previous snapshot's end of data."""
    index = _previous_index(ctx, bucket)
    overlaps = pc.and_(
        pc.less_equal(index.column("first_output_day"), last),
        pc.greater_equal(index.column("last_output_day"), first),
    )
    index = index.filter(overlaps)
    if not index.num_rows:
        return
    records = _read_jobs(ctx, bucket, index)
    job_days, ledger = _account(ctx, records, ctx.previous_data_end, (version,))
    days = [d for d in _day_range(first, last)]
    jobs = set(index.column("job_id").to_pylist())
    yield from _merge_days(ctx, bucket, (jobs, frozenset([version])), days, (job_days, ledger))
