"""A bucket's job tables: its changed jobs accounted again and merged in, day by day.

`account_bucket` follows `mpg.pipelines.buckets.update_bucket_records` in a run (touched buckets,
and untouched ones whose open jobs the end of data moved); `backfill_bucket` serves
`mpg backfill`. Both read the previous snapshot and replace, in staging, only the day files of
`job_day_goodput` and `chip_time_ledger` whose rows change, and say which.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.pipelines.buckets import (
    BucketUpdate,
    UpdateContext,
    days_present,
    only_jobs,
    without_jobs,
)
from mpg.pipelines.io import read_parquet, record_store_file, write_parquet
from mpg.pipelines.state import Coverage, job_index_file
from mpg.schemas import (
    DAY_COLUMN,
    JOB_INDEX,
    RECORD_SCHEMAS,
    SOURCES,
    TABLE_KEYS,
    TABLES,
    concat,
    conform,
)
from mpg.transforms.account import account_chip_time
from mpg.transforms.reconcile import JobRecords

JOB_TABLES = ("job_day_goodput", "chip_time_ledger")


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
        tables[source] = only_jobs(stored, jobs)
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
        return without_jobs(old, jobs)
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
    days = rows.column("day")
    for version, spans in coverage:
        keep = pc.not_equal(rows.column("metric_version"), version)
        for first, last in spans:
            keep = pc.or_(keep, pc.and_(pc.greater_equal(days, first), pc.less_equal(days, last)))
        rows, days = rows.filter(keep), days.filter(keep)
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
            only_jobs(update.records.table(s), jobs).select(["job_id", DAY_COLUMN[s]])
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
    records = JobRecords(bucket, **{s: only_jobs(update.records.table(s), jobs) for s in SOURCES})
    job_days, ledger = _account(ctx, records, data_end, ctx.metric_versions)
    old_index = _previous_index(ctx, bucket)
    days = _indexed_days(only_jobs(old_index, jobs), "first_output_day", "last_output_day")
    days |= days_present(job_days, "day")
    yield from _merge_days(ctx, bucket, (jobs, None), days, (job_days, ledger))
    index = concat([without_jobs(old_index, jobs), _index_rows(update, jobs, job_days)], JOB_INDEX)
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
