"""The pipeline's sinks under Beam's TestPipeline: hand-made tables and references in, what they
emit checked with assert_that, and the files they wrote read back."""

from __future__ import annotations

import datetime
from pathlib import Path

import apache_beam as beam
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from mpg.definitions.catalog import load_catalog
from mpg.definitions.config import OutputConfig
from mpg.definitions.costs import cost_rates, load_cost_catalog
from mpg.output.store import RECORD_ROW_GROUP, OutputStore
from mpg.pipelines.buckets import BucketUpdate, RecordStore
from mpg.pipelines.finish import StatePlan, WriteSnapshotState
from mpg.pipelines.ingest import FileStats
from mpg.pipelines.io import LineBlock, TraceFile
from mpg.pipelines.sinks import (
    TABLE_CHANGES,
    DayChange,
    DayRows,
    Segment,
    WriteDayFiles,
    WriteRecordSegments,
    WriteTableChanges,
)
from mpg.schemas import (
    COST_RATES,
    DATA_FILES,
    JOB_INDEX,
    MANIFEST,
    PUBLISHED,
    QUARANTINE,
    RECORD_COUNTS,
    SEGMENTS,
    STORED_SCHEMAS,
)
from mpg.transforms.parse import ParsedBlock
from mpg.transforms.steps import ParseTraceRecords

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
    assert coder.to_type_hint() is Segment  # a runner rebuilding the graph from its proto


def test_blocks_between_fused_steps_are_sized_not_encoded() -> None:
    """So are a block of lines on its way to the parser and the parsed block on its way to be
    cut into buckets: 19 bytes of text and two int64 pairs of line bounds; the records' and
    quarantine's buffers."""
    data = b'{"a": 1}\n{"b": 22}\n'
    bounds = (np.array([0, 9]), np.array([8, 18]))
    block = LineBlock(TraceFile("runtime", "/r", "runtime/a.jsonl", 19, 0), 1, data, bounds=bounds)
    assert beam.coders.registry.get_coder(LineBlock).estimate_size(block) == 19 + 16 + 16
    parsed = ParsedBlock("scheduler", "a.jsonl", RECORDS, QUARANTINE.empty_table(), 2)
    assert beam.coders.registry.get_coder(ParsedBlock).estimate_size(parsed) == RECORDS.nbytes
    p = BeamTestPipeline()
    out = p | beam.Create([block]) | ParseTraceRecords(load_catalog())
    assert out.element_type is ParsedBlock  # the type the coder is registered for


def _index_row(job_hash: int, job: str, segment: str, **counts: int) -> dict[str, object]:
    row: dict[str, object] = {f.name: 0 for f in JOB_INDEX if f.type == pa.int64()}
    row.update(job_hash=job_hash, job_id=job, segment=segment, submitted=True, open=False)
    return row | counts


def _quarantine_row(source: str, file: str, line: int, reason: str, job: str | None) -> dict:
    return {"source": source, "file": file, "line": line, "reason": reason, "raw": f"{file}:{line}",
            "job_id": job}  # fmt: skip


def test_write_snapshot_state_merges_the_previous_one(tmp_path: Path) -> None:
    """A second run's state: s/a.jsonl kept (line 1 refused at parsing, a's records on lines 2-3,
    b's on 4-5, line 5 refused when b was reconciled), s/old.jsonl and r/gone.jsonl retracted
    (r/gone.jsonl fed job c, which loses every record), r/new.jsonl new (b's two runtime records,
    line 3 refused). Job b was rewritten into this run's segment; a and its segment stay."""
    store = OutputStore(str(tmp_path / "out"))
    old, run = store.run("r0"), store.run(RUN)
    old_index = [
        _index_row(5, "a", "r0-b00000", rows_scheduler=2, accepted_scheduler=2),
        _index_row(9, "b", "r0-b00000", rows_scheduler=2, accepted_scheduler=1,
                   quarantined_scheduler=1),
        _index_row(12, "c", "r0-b00001", rows_runtime=1, accepted_runtime=1),
    ]  # fmt: skip
    store.write_parquet(pa.Table.from_pylist(old_index, schema=JOB_INDEX), old.state("jobs"))
    old_segments = [
        {"segment": "r0-b00000", "source": "scheduler", "path": "p0", "rows": 4},
        {"segment": "r0-b00001", "source": "runtime", "path": "p1", "rows": 1},
    ]
    store.write_parquet(pa.Table.from_pylist(old_segments, schema=SEGMENTS), old.state("segments"))
    old_quarantine = [
        _quarantine_row("scheduler", "s/a.jsonl", 1, "invalid JSON", None),  # stays
        _quarantine_row("scheduler", "s/a.jsonl", 5, "conflicting JOB_END", "b"),  # decided again
        _quarantine_row("scheduler", "s/old.jsonl", 1, "invalid JSON", None),  # retracted
    ]
    quarantine = old.data_file("quarantine")
    store.write_parquet(pa.Table.from_pylist(old_quarantine, schema=QUARANTINE), quarantine)
    kept = pa.Table.from_pylist(
        [{"source": "scheduler", "name": "s/a.jsonl", "size": 50, "mtime_ns": 1, "sha256": "x",
          "lines_read": 5, "quarantined": 1}],
        schema=MANIFEST,
    )  # fmt: skip
    # What this run's steps handed on
    new_index = [
        _index_row(9, "b", "r1-b00000", rows_scheduler=2, accepted_scheduler=1,
                   quarantined_scheduler=1, rows_runtime=2, accepted_runtime=2)
    ]  # fmt: skip
    store.write_scratch(run.bucket_index(0), [pa.Table.from_pylist(new_index, schema=JOB_INDEX)])
    store.write_scratch(run.bucket_jobs(0), [pa.table({"job_id": ["b"], "accounted": [True]})])
    refused = run.refused("runtime", "f1", 1)
    store.write_scratch(
        refused,
        [pa.Table.from_pylist([_quarantine_row("runtime", "r/new.jsonl", 3, "invalid JSON", None)],
                              schema=QUARANTINE)],
    )  # fmt: skip
    recovered = run.recovered("f0")
    store.write_scratch(
        recovered,
        [pa.Table.from_pylist([_quarantine_row("scheduler", "s/a.jsonl", 5, "conflicting JOB_END",
                                               "b")], schema=QUARANTINE)],
    )  # fmt: skip
    removed = pa.table({"job_hash": pa.array([12], pa.int64()), "job_id": ["c"]})
    rates = cost_rates(load_cost_catalog(), load_catalog(), OutputConfig())
    (tmp_path / "traces").mkdir()
    plan = StatePlan(
        records=RecordStore(run, 1, old.state("jobs"), frozenset({"s/old.jsonl", "r/gone.jsonl"})),
        kept=kept,
        segments=old.state("segments"),
        quarantine=quarantine,
        removed=removed,
        traces=str(tmp_path / "traces"),
        rates=rates,
    )
    new_segments = [
        {"segment": "r1-b00000", "source": s, "path": store.segment(s, "r1-b00000"), "rows": 2}
        for s in ("scheduler", "runtime")
    ]
    stats = FileStats("runtime", "r/new.jsonl", 30, 2, "y", lines_read=3, quarantined=1)
    with BeamTestPipeline(runner="FnApiRunner") as p:
        _ = {
            "files": p | "Files" >> beam.Create([stats]),
            "index": p | "Index" >> beam.Create([run.bucket_index(0)]),
            "segments": p | "Segments" >> beam.Create(new_segments),
            "updates": p | "Updates" >> beam.Create([BucketUpdate(0, "b0", run.bucket_jobs(0), 1)]),
            "refused": p | "Refused" >> beam.Create([refused]),
            "recovered": p | "Recovered" >> beam.Create([recovered]),
        } | WriteSnapshotState(plan)
    manifest = store.read_parquet(run.state("manifest"), MANIFEST).to_pylist()
    assert [(r["name"], r["lines_read"], r["quarantined"]) for r in manifest] == [
        ("r/new.jsonl", 3, 1),
        ("s/a.jsonl", 5, 1),
    ]
    index = store.read_parquet(run.state("jobs"), JOB_INDEX).to_pylist()
    assert [(r["job_id"], r["segment"]) for r in index] == [("a", "r0-b00000"), ("b", "r1-b00000")]
    segments = store.read_parquet(run.state("segments"), SEGMENTS).to_pylist()
    assert [(r["segment"], r["source"], r["rows"]) for r in segments] == [
        ("r0-b00000", "scheduler", 4),
        ("r1-b00000", "runtime", 2),
        ("r1-b00000", "scheduler", 2),
    ]
    rows = store.read_parquet(run.data_file("quarantine"), QUARANTINE).to_pylist()
    assert [(r["source"], r["file"], r["line"], r["job_id"]) for r in rows] == [
        ("runtime", "r/new.jsonl", 3, None),
        ("scheduler", "s/a.jsonl", 1, None),
        ("scheduler", "s/a.jsonl", 5, "b"),
    ]
    counts = store.read_parquet(run.data_file("record_counts"), RECORD_COUNTS).to_pylist()
    # read = accepted + duplicates + quarantined (at parsing, from the manifest; when reconciled,
    # from the index)
    assert [
        (r["source"], r["records_read"], r["accepted"], r["duplicates"], r["quarantined"])
        for r in counts
    ] == [("scheduler", 5, 3, 0, 2), ("runtime", 3, 2, 0, 1), ("profiles", 0, 0, 0, 0)]
    assert store.read_parquet(run.data_file("cost_rates"), COST_RATES).equals(rates)
