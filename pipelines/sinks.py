"""The pipeline's sinks: where the records and tables a snapshot keeps are written.

The steps before them compute: `gather_bucket` (`mpg.pipelines.buckets`) returns a bucket's new
record-store segments, `merge_day` (`mpg.pipelines.days`) a day's new table rows, each with
where it goes decided by `RunFiles`; they write none of it. The graph ends here:

    Segment  | WriteRecordSegments -> a SEGMENTS row    records/<source>/<segment>.parquet
    DayRows  | WriteDayFiles       -> a DayChange       tables/<table>/data/day=D/<run>-0.parquet
    references, summaries | WriteResult -> one file   .mpg/staging/<run>/results/<name>.parquet

A sink emits references only (a path and a row count), which `WriteResult` gathers into one small
file per kind for the launcher, and `WriteSnapshotState` (`mpg.pipelines.finish`) merges into the
new snapshot's state; the launcher commits them (`mpg.pipelines.publish`).

A step's table reaches its sink in memory: the sink is a ParDo right after the step's, with no
shuffle between, so the runner fuses the two into one stage and hands each element on as it is
yielded, as a call; the records never cross a shuffle or a side input, and a worker holds one
bucket's (or one day's) tables at a time, as when the step wrote them itself. They are not encoded
either: Beam sizes a sample of every PCollection's elements (the first ten, then fewer) by
encoding them with the PCollection's coder, which for an object is pickling it, a copy of a
bucket's records; `Segment` and `DayRows` have their own coder (`mpg.pipelines.coders`), whose
size is their tables' buffers.

What the steps write between them (parsed blocks, a bucket's accepted records, its rows per day,
its index rows, quarantine references and recovered text, all under the run's scratch,
`RunFiles`) is transport, not a result: the next step reads it and the run removes it. Those
files are written by the step that hands them on.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

import apache_beam as beam
import polars as pl
import pyarrow as pa

from mpg.output.store import RunFiles
from mpg.pipelines.coders import in_memory
from mpg.schemas import DATA_FILES, PUBLISHED, STORED_SCHEMAS, conform

# What `WriteResult` writes: the names of the run's results (`RunFiles.result`).
FILE_STATS = "file-stats"
TABLE_CHANGES = "table-changes"
SOURCE_RESULTS = "source-results"


@dataclass(frozen=True)
class Segment:
    """One bucket's new record-store segment of one source: every parsed record of the jobs it
    rewrote, in the store's order (by job hash, then RECORD_ORDER), with their job hash."""

    segment: str  # `RunFiles.segment_id`
    source: str
    records: pl.DataFrame

    @property
    def nbytes(self) -> int:
        return int(self.records.estimated_size())


@dataclass(frozen=True)
class DayRows:
    """One table's rows of one day, as they now are (none: the day loses its file)."""

    table: str
    day: datetime.date
    rows: pa.Table

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes


in_memory(Segment, DayRows)


@dataclass(frozen=True)
class DayChange:
    """A new data file of one table and day (`path` None: the day has no rows any more)."""

    table: str
    day: datetime.date
    path: str | None
    rows: int

    def row(self) -> dict[str, object]:
        """As a DATA_FILES row (an empty path for a day that lost its file)."""
        return {"table": self.table, "day": self.day, "path": self.path or "", "rows": self.rows}


def write_segment(segment: Segment, run: RunFiles) -> dict[str, object]:
    """Write one segment; returns its SEGMENTS row."""
    records = conform(segment.records.to_arrow(), STORED_SCHEMAS[segment.source])
    run.store.write_segment(records, segment.source, segment.segment)
    path = run.store.segment(segment.source, segment.segment)
    rows = records.num_rows
    return {"segment": segment.segment, "source": segment.source, "path": path, "rows": rows}


def write_day_file(day: DayRows, run: RunFiles) -> DayChange:
    """Write one table's day file (none when the day has no rows); returns the change."""
    if day.rows.num_rows == 0:
        return DayChange(day.table, day.day, None, 0)
    path = run.data_file(day.table, day.day)
    run.store.write_parquet(day.rows.cast(PUBLISHED[day.table]), path)
    return DayChange(day.table, day.day, path, day.rows.num_rows)


class WriteRecordSegments(beam.PTransform):
    """Segment -> its SEGMENTS row, the file written."""

    def __init__(self, run: RunFiles) -> None:
        super().__init__()
        self._run = run

    def expand(self, segments):
        return segments | "WriteSegment" >> beam.Map(write_segment, self._run)


class WriteDayFiles(beam.PTransform):
    """DayRows -> DayChange, the file written."""

    def __init__(self, run: RunFiles) -> None:
        super().__init__()
        self._run = run

    def expand(self, days):
        return days | "WriteDayFile" >> beam.Map(write_day_file, self._run)


class Gather(beam.PTransform):
    """Every element of a small PCollection (references, summaries) as one list: a PCollection
    of exactly one element, the empty list where there are none. The elements are a side input
    of a one-element `Create`, which costs the runner one stage; a global combine
    (`combiners.ToList`) cost two, the second only to give an empty input its default (each
    small stage 10-30 ms on the local runner, whatever it holds)."""

    def expand(self, pcoll):
        return (
            pcoll.pipeline
            | "Once" >> beam.Create([None])
            | "AsList" >> beam.Map(lambda _, items: list(items), beam.pvalue.AsList(pcoll))
        )


class WriteResult(beam.PTransform):
    """Every element of a small PCollection (references, summaries) as rows of one of the run's
    results (`RunFiles.result`); `rows` orders them (the same input gives the same bytes)."""

    def __init__(
        self,
        run: RunFiles,
        name: str,
        schema: pa.Schema,
        rows: Callable[[list], list[dict[str, object]]],
    ) -> None:
        super().__init__()
        self._run, self._name, self._schema, self._rows = run, name, schema, rows

    def expand(self, pcoll):
        return pcoll | "Gather" >> Gather() | "Write" >> beam.Map(self._write)

    def _write(self, elements: list) -> str:
        rows = self._rows(elements)
        path = self._run.result(self._name)
        self._run.store.write_parquet(pa.Table.from_pylist(rows, schema=self._schema), path)
        return path


def _change_rows(changes: list[DayChange]) -> list[dict[str, object]]:
    return sorted((c.row() for c in changes), key=lambda r: (r["table"], r["day"]))


class WriteTableChanges(beam.PTransform):
    """DayChange -> the run's TABLE_CHANGES result (DATA_FILES rows, by table and day)."""

    def __init__(self, run: RunFiles) -> None:
        super().__init__()
        self._run = run

    def expand(self, changes):
        return changes | WriteResult(self._run, TABLE_CHANGES, DATA_FILES, _change_rows)
