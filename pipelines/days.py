"""Day partitions: each day's job tables rebuilt from its old file and the buckets' new rows.

    (day, DayRef) | MergeJobTableDays -> DayRows per table and day that changed
                  | WriteDayFiles     -> DayChange                    (mpg.pipelines.sinks)

The job tables are partitioned by UTC day, one data file per table and day. For one day, the
buckets that accounted jobs there hand over their new rows and the jobs whose rows they replace;
the day's file is the old one less those jobs' rows, plus the new rows, sorted by the table's
key (so the same input gives the same bytes). A day whose rows come out as they were is left as
it was; a day with no rows left loses its file. Two tables follow from the others, day by day:
`goodput_by_slice` from the job-day rows (`mpg.transforms.slices`) and `chip_time_cost` from
the ledger at the run's prices (`mpg.definitions.costs`). When the prices changed, the run also
sends every day here with no rows (a `None` ref), to cost its unchanged ledger again.

Merging writes nothing: each changed day's rows go on, in memory, to the sink that follows it in
the same stage (`WriteDayFiles`). Memory is one day's rows of the job tables (one row per job and
day): it does not grow with the records of the fleet.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc

from mpg.definitions.costs import chip_time_cost
from mpg.output.store import RunFiles
from mpg.pipelines.accounting import JOB_TABLES, REPLACED, VERSIONED, DayRef, day_files
from mpg.pipelines.sinks import DayRows
from mpg.schemas import PUBLISHED, TABLE_KEYS, concat
from mpg.transforms.slices import goodput_by_slice


@dataclass(frozen=True)
class DayTables:
    """What merging a day needs beside its refs."""

    run: RunFiles
    previous: dict[tuple[str, datetime.date], str]  # (table, day) -> the current data file
    rates: pa.Table  # COST_RATES: what costs are priced at
    versions: frozenset[str] | None = None  # replace only these versions' rows (a backfill)
    # Every published day (YYYY-MM-DD) when the rates differ from the previous snapshot's: each
    # is merged with no new rows, to price its unchanged ledger again.
    repriced: tuple[str, ...] = ()

    def old_rows(self, table: str, day: datetime.date) -> pa.Table:
        path = self.previous.get((table, day))
        schema = PUBLISHED[table]
        return schema.empty_table() if path is None else self.run.store.read_parquet(path, schema)


def _sorted(table: pa.Table, name: str) -> pa.Table:
    return table.sort_by([(k, "ascending") for k in TABLE_KEYS[name]])


def _kept(old: pa.Table, jobs: pa.Array, versions: frozenset[str] | None) -> pa.Table:
    replaced = pc.is_in(old.column("job_id"), jobs)
    if versions is not None:
        in_versions = pc.is_in(old.column("metric_version"), pa.array(sorted(versions)))
        replaced = pc.and_(replaced, in_versions)
    return old.filter(pc.invert(replaced))


def merge_day(element: tuple[str, Iterable[DayRef | None]], tables: DayTables) -> Iterator[DayRows]:
    """One day's tables (the day as YYYY-MM-DD): the job tables merged, then those that follow
    from them where they changed or prices did; the rows of each that changed, sorted by the
    table's key."""
    day = datetime.date.fromisoformat(element[0])
    refs = sorted((r for r in element[1] if r is not None), key=lambda r: r.name)
    store = tables.run.store
    files = [day_files(tables.run, ref.name) for ref in refs]
    jobs = concat(
        (store.read_scratch(f["replaced"], [r.batch]) for f, r in zip(files, refs, strict=True)),
        REPLACED,
    ).column("job_id")
    rows, changed = {}, set()
    for name in JOB_TABLES:
        if tables.versions is not None and name not in VERSIONED:
            rows[name] = tables.old_rows(name, day)  # a backfill changes one version's rows
            continue
        old = tables.old_rows(name, day)
        new = concat(
            (store.read_scratch(f[name], [r.batch]) for f, r in zip(files, refs, strict=True)),
            PUBLISHED[name],
        )
        kept = _kept(old, jobs.combine_chunks(), tables.versions)
        rows[name] = _sorted(concat([kept, new], PUBLISHED[name]), name)
        if not rows[name].equals(old):
            changed.add(name)
            yield DayRows(name, day, rows[name])
    if "job_day_goodput" in changed:
        yield DayRows("goodput_by_slice", day, goodput_by_slice(rows["job_day_goodput"]))
    if changed & {"job_day_goodput", "chip_time_ledger"} or tables.repriced:
        costs = _sorted(
            chip_time_cost(rows["chip_time_ledger"], rows["job_day_goodput"], tables.rates),
            "chip_time_cost",
        )
        if not costs.equals(tables.old_rows("chip_time_cost", day)):
            yield DayRows("chip_time_cost", day, costs)


class MergeJobTableDays(beam.PTransform):
    """(day, DayRef) -> DayRows for each table and day whose rows changed."""

    def __init__(self, tables: DayTables) -> None:
        super().__init__()
        self._tables = tables

    def expand(self, refs):
        return (
            refs
            | "GroupByDay" >> beam.GroupByKey()
            | "MergeDay" >> beam.FlatMap(merge_day, self._tables).with_output_types(DayRows)
        )
