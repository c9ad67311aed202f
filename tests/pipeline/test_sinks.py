"""The pipeline's sinks under Beam's TestPipeline: hand-made tables in, the references they emit
checked with assert_that, and the files they wrote read back."""

from __future__ import annotations

import datetime
from pathlib import Path

import apache_beam as beam
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from mpg.pipelines.sinks import (
    TABLE_CHANGES,
    DayChange,
    DayRows,
    Segment,
    WriteDayFiles,
    WriteRecordSegments,
    WriteTableChanges,
)
from mpg.pipelines.store import RECORD_ROW_GROUP, OutputStore
from mpg.schemas import DATA_FILES, PUBLISHED, STORED_SCHEMAS

RUN = "r1"
DAY = datetime.date(2026, 11, 20)
UTC = datetime.UTC


def _scheduler(job_hash: int, job: str, kind: str, minute: int, line: int) -> dict[str, object]:
    stamp = datetime.datetime(2026, 11, 20, 0, minute, tzinfo=UTC)
    return {"job_hash": job_hash, "type": kind, "ts": stamp, "job_id": job, "file": "s.jsonl",
            "line": line}  # fmt: skip


# Two jobs' scheduler records, by job hash, as `update_bucket` hands them on.
RECORDS = pa.Table.from_pylist(
    [
        _scheduler(7, "a", "JOB_SUBMIT", 0, 1),
        _scheduler(7, "a", "JOB_END", 9, 3),
        _scheduler(9, "b", "JOB_SUBMIT", 1, 2),
    ],
    schema=STORED_SCHEMAS["scheduler"],
)


def test_write_record_segments(tmp_path: Path) -> None:
    """Each segment written whole where `RunFiles` puts it, with its SEGMENTS row emitted."""
    run = OutputStore(str(tmp_path)).run(RUN)
    segments = [
        Segment(run.segment_id(0), "scheduler", pl.from_arrow(RECORDS)),
        Segment(run.segment_id(1), "scheduler", pl.from_arrow(RECORDS.slice(2))),
    ]
    with BeamTestPipeline(runner="FnApiRunner") as p:
        rows = p | beam.Create(segments) | WriteRecordSegments(run)
        assert_that(
            rows,
            equal_to(
                [
                    {"segment": "r1-b00000", "source": "scheduler",
                     "path": "records/scheduler/r1-b00000.parquet", "rows": 3},
                    {"segment": "r1-b00001", "source": "scheduler",
                     "path": "records/scheduler/r1-b00001.parquet", "rows": 1},
                ]
            ),
        )  # fmt: skip
    first = pq.ParquetFile(tmp_path / "records" / "scheduler" / "r1-b00000.parquet")
    assert first.read().cast(STORED_SCHEMAS["scheduler"]).equals(RECORDS)
    assert first.metadata.row_group(0).num_rows == 3 <= RECORD_ROW_GROUP
    second = pq.read_table(tmp_path / "records" / "scheduler" / "r1-b00001.parquet")
    assert second.column("job_id").to_pylist() == ["b"]


LEDGER = pa.Table.from_pylist(
    [
        {"day": DAY, "job_id": "a", "metric_version": "v1", "category": "init", "chip_s": 120.0},
        {"day": DAY, "job_id": "a", "metric_version": "v1", "category": "idle", "chip_s": 60.0},
    ],
    schema=PUBLISHED["chip_time_ledger"],
)


def test_write_day_files(tmp_path: Path) -> None:
    """A day's rows as that day's file of the table; a day left with no rows gets no file (its
    change has no path); the changes gathered, sorted, into the run's TABLE_CHANGES."""
    run = OutputStore(str(tmp_path)).run(RUN)
    days = [
        DayRows("chip_time_ledger", DAY, LEDGER),
        DayRows("step_time_stats", DAY, PUBLISHED["step_time_stats"].empty_table()),
    ]
    ledger = "tables/chip_time_ledger/data/day=2026-11-20/r1-0.parquet"
    with BeamTestPipeline(runner="FnApiRunner") as p:
        changes = p | beam.Create(days) | WriteDayFiles(run)
        assert_that(
            changes,
            equal_to(
                [
                    DayChange("chip_time_ledger", DAY, ledger, 2),
                    DayChange("step_time_stats", DAY, None, 0),
                ]
            ),
        )
        _ = changes | WriteTableChanges(run)
    assert pq.read_table(tmp_path / ledger).equals(LEDGER)
    assert not (tmp_path / "tables" / "step_time_stats").exists()
    written = run.store.read_parquet(run.result(TABLE_CHANGES), DATA_FILES).to_pylist()
    assert written == [
        {"table": "chip_time_ledger", "day": DAY, "path": ledger, "rows": 2},
        {"table": "step_time_stats", "day": DAY, "path": "", "rows": 0},
    ]


def test_the_tables_handed_to_a_sink_are_sized_not_encoded() -> None:
    """Beam sizes a sample of each PCollection's elements with its coder; a Segment's and a
    DayRows' coder gives their tables' buffers, without pickling them."""
    coder = beam.coders.registry.get_coder(Segment)
    segment = Segment("r1-b00000", "scheduler", pl.from_arrow(RECORDS))
    assert coder.estimate_size(segment) == segment.records.estimated_size()
    day = DayRows("chip_time_ledger", DAY, LEDGER)
    assert beam.coders.registry.get_coder(DayRows).estimate_size(day) == LEDGER.nbytes
    assert coder.decode(coder.encode(segment)).records.equals(segment.records)
