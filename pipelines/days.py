"""Day partitions: each day's job tables rebuilt from its old file and the buckets' new rows.

    (day, DayRef) | GroupByKey | MergeJobTableDays -> DayChange per table and day that changed

The job tables are partitioned by UTC day, one data file per table and day. For one day, the
buckets that accounted jobs there hand over their new rows and the jobs whose rows they replace;
the day's file is the old one less those jobs' rows, plus the new rows, sorted by the table's
key (so the same input gives the same bytes). A day whose rows come out as they were is left as
it was; a day with no rows left loses its file. `goodput_by_slice` of a changed day follows from
its new job-day rows (`mpg.transforms.slices`).

Memory is one day's rows of the job tables (one row per job and day): it does not grow with the
records of the fleet.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc

from mpg.pipelines.accounting import JOB_TABLES, REPLACED, DayRef, day_files
from mpg.pipelines.store import OutputStore
from mpg.schemas import TABLE_KEYS, TABLES, concat
from mpg.transforms.slices import goodput_by_slice


@dataclass(frozen=True)
class DayChange:
    """A new data file of one table and day (`path` None: the day has no rows any more)."""

    table: str
    day: datetime.date
    path: str | None
    rows: int


@dataclass(frozen=True)
class DayTables:
    """What merging a day needs beside its refs."""

    store: OutputStore
    run_id: str
    previous: dict[tuple[str, datetime.date], str]  # (table, day) -> the current data file
    versions: frozenset[str] | None = None  # replace only these versions' rows (a backfill)

    def old_rows(self, table: str, day: datetime.date) -> pa.Table:
        path = self.previous.get((table, day))
        schema = TABLES[table]
        return schema.empty_table() if path is None else self.store.read_parquet(path, schema)


def _sorted(table: pa.Table, name: str) -> pa.Table:
    return table.sort_by([(k, "ascending") for k in TABLE_KEYS[name]])


def _kept(old: pa.Table, jobs: pa.Array, versions: frozenset[str] | None) -> pa.Table:
    replaced = pc.is_in(old.column("job_id"), jobs)
    if versions is not None:
        in_versions = pc.is_in(old.column("metric_version"), pa.array(sorted(versions)))
        replaced = pc.and_(replaced, in_versions)
    return old.filter(pc.invert(replaced))


def merge_day(element: tuple[str, Iterable[DayRef]], tables: DayTables) -> Iterator[DayChange]:
    """One day's job tables (the day as YYYY-MM-DD), and its slices when its job-day rows
    changed."""
    day = datetime.date.fromisoformat(element[0])
    refs = element[1]
    refs = sorted(refs, key=lambda r: r.name)
    store, run_id = tables.store, tables.run_id
    files = [day_files(store, run_id, ref.name) for ref in refs]
    jobs = concat(
        (store.read_scratch(f["replaced"], [r.batch]) for f, r in zip(files, refs, strict=True)),
        REPLACED,
    ).column("job_id")
    merged = {}
    for name in JOB_TABLES:
        old = tables.old_rows(name, day)
        new = concat(
            (store.read_scratch(f[name], [r.batch]) for f, r in zip(files, refs, strict=True)),
            TABLES[name],
        )
        rows = _sorted(
            concat([_kept(old, jobs.combine_chunks(), tables.versions), new], TABLES[name]), name
        )
        merged[name] = rows
        if not rows.equals(old.cast(TABLES[name])):
            yield _write(store, run_id, name, day, rows)
    if not merged["job_day_goodput"].equals(tables.old_rows("job_day_goodput", day)):
        yield _write(
            store, run_id, "goodput_by_slice", day, goodput_by_slice(merged["job_day_goodput"])
        )


def _write(
    store: OutputStore, run_id: str, table: str, day: datetime.date, rows: pa.Table
) -> DayChange:
    if rows.num_rows == 0:
        return DayChange(table, day, None, 0)
    path = store.data_file(table, run_id, day)
    store.write_parquet(rows.cast(TABLES[table]), path)
    return DayChange(table, day, path, rows.num_rows)


class MergeJobTableDays(beam.PTransform):
    """(day, DayRef) -> DayChange for each table and day whose rows changed."""

    def __init__(self, tables: DayTables) -> None:
        super().__init__()
        self._tables = tables

    def expand(self, refs):
        return (
            refs
            | "GroupByDay" >> beam.GroupByKey()
            | "MergeDay" >> beam.FlatMap(merge_day, self._tables)
        )
