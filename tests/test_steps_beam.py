"""Each composite PTransform run under Beam's TestPipeline (in-process FnApiRunner), fed with
beam.Create and checked with assert_that, as in Beam's own examples."""

from __future__ import annotations

import json
import pickle

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from mpg.catalog import load_catalog
from mpg.pipelines.io import LineBlock, TraceFile
from mpg.transforms.parse import BlockParser
from mpg.transforms.steps import (
    AccountChipTime,
    CountRecords,
    ParseTraceRecords,
    ReconcileJobs,
    split_by_bucket,
)
from tests.timeline import end, schedule, span, submit

CATALOG = load_catalog()


def _block(
    source: str, records: list[dict | str], name: str = "a.jsonl", first_line: int = 1
) -> LineBlock:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    file = TraceFile(source=source, path=f"/nowhere/{source}/{name}", name=f"{source}/{name}")
    return LineBlock(file=file, first_line=first_line, data=text.encode())


SCHEDULER = [submit("j", "00:00", 2), schedule("j", "00:00", 0, 2), end("j", "00:10")]
RUNTIME = [span("j", "step", "00:00", "00:05", step=1), span("j", "init", "00:05", "00:06")]


def _blocks() -> list[LineBlock]:
    return [
        _block("scheduler", [*SCHEDULER, "not json"]),
        _block("runtime", RUNTIME[:1], "a.jsonl"),
        # the second file repeats the first span (an exporter retry) and names an unknown job
        _block(
            "runtime", [RUNTIME[0], RUNTIME[1], span("ghost", "init", "00:00", "00:01")], "b.jsonl"
        ),
    ]


@pytest.fixture
def pipeline() -> BeamTestPipeline:
    return BeamTestPipeline(runner="FnApiRunner")


def test_parse_trace_records(pipeline: BeamTestPipeline) -> None:
    with pipeline as p:
        parsed = p | beam.Create(_blocks()) | ParseTraceRecords(CATALOG)
        summary = parsed | beam.Map(
            lambda b: (
                b.file,
                b.lines_read,
                b.records.num_rows,
                b.quarantine.column("reason").to_pylist(),
            )
        )
        assert_that(
            summary,
            equal_to(
                [
                    ("scheduler/a.jsonl", 4, 3, ["invalid JSON"]),
                    ("runtime/a.jsonl", 1, 1, []),
                    ("runtime/b.jsonl", 3, 3, []),
                ]
            ),
        )


@pytest.mark.parametrize("buckets", [1, 3])
def test_reconcile_jobs(pipeline: BeamTestPipeline, buckets: int) -> None:
    with pipeline as p:
        reconciled = (
            p | beam.Create(_blocks()) | ParseTraceRecords(CATALOG) | ReconcileJobs(buckets)
        )
        per_source = (
            reconciled
            | beam.FlatMap(
                lambda b: [(c.source, (c.accepted, c.duplicates, c.quarantined)) for c in b.counts]
            )
            | beam.CombinePerKey(lambda vs: tuple(map(sum, zip(*vs, strict=True))))
        )
        assert_that(
            per_source,
            equal_to([("scheduler", (3, 0, 0)), ("runtime", (2, 1, 1)), ("profiles", (0, 0, 0))]),
        )


def test_account_chip_time(pipeline: BeamTestPipeline) -> None:
    # 2 chips for 600 s: step 300 s productive (kept: last attempt of a FINISHED job), init 60 s,
    # idle 240 s.
    with pipeline as p:
        accounted = (
            p
            | beam.Create(_blocks())
            | ParseTraceRecords(CATALOG)
            | ReconcileJobs(4)
            | beam.Map(lambda b: b.records)
            | AccountChipTime(CATALOG, ("v1",))
        )
        ledger = accounted | beam.FlatMap(
            lambda t: [(r["job_id"], r["category"], r["chip_s"]) for r in t[2].to_pylist()]
        )
        assert_that(
            ledger,
            equal_to(
                [
                    ("j", "productive_unprofiled", 600.0),
                    ("j", "init", 120.0),
                    ("j", "runtime_idle", 480.0),
                ]
            ),
        )


def test_count_records(pipeline: BeamTestPipeline) -> None:
    with pipeline as p:
        parsed = p | beam.Create(_blocks()) | ParseTraceRecords(CATALOG)
        buckets = parsed | ReconcileJobs(2)
        counts = (parsed, buckets) | CountRecords()
        # read = accepted + duplicates + quarantined, per source
        assert_that(
            counts,
            equal_to(
                [("scheduler", (4, 3, 0, 1)), ("runtime", (4, 2, 1, 1)), ("profiles", (0, 0, 0, 0))]
            ),
        )


def test_bucket_parts_pickle_compactly() -> None:
    """What crosses the shuffle is compact: the parts of a block pickle to about the block's size
    (a slice of an Arrow table would carry its parent's whole buffers, once per bucket)."""
    spans = [span(f"job-{i}", "step", "00:00", "00:01", step=i) for i in range(2000)]
    parser = BlockParser(CATALOG)
    block = _block("runtime", spans)
    parsed = parser.parse("runtime", block.file.name, block.data)
    parts = list(split_by_bucket(parsed, 64))
    assert len(parts) == 64
    assert sum(p[1][1].num_rows for p in parts) == 2000
    whole = len(pickle.dumps(parsed.records))
    assert sum(len(pickle.dumps(p[1][1])) for p in parts) < 2 * whole


def test_the_unreadable_rest_of_a_file_is_one_quarantined_record(
    pipeline: BeamTestPipeline,
) -> None:
    # Truncation right after a complete record: its text parses, but it is part of the damage.
    block = _block("runtime", [RUNTIME[0]])
    broken = LineBlock(
        block.file, 7, block.data.rstrip(b"\n"), problem="unreadable file: truncated"
    )
    with pipeline as p:
        parsed = p | beam.Create([broken]) | ParseTraceRecords(CATALOG)
        assert_that(
            parsed
            | beam.Map(lambda b: (b.lines_read, b.records.num_rows, b.quarantine.to_pylist())),
            equal_to(
                [
                    (
                        1,
                        0,
                        [
                            {
                                "source": "runtime",
                                "file": "runtime/a.jsonl",
                                "line": 7,
                                "reason": "unreadable file: truncated",
                                "raw": json.dumps(RUNTIME[0]),
                            }
                        ],
                    )
                ]
            ),
        )
