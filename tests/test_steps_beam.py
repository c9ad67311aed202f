"""Each composite PTransform run under Beam's TestPipeline (in-process FnApiRunner), fed with
beam.Create and checked with assert_that, as in Beam's own examples."""

from __future__ import annotations

import datetime
import json
import pickle
from collections.abc import Iterable
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from mpg.catalog import load_catalog
from mpg.pipelines.buckets import UpdateContext
from mpg.pipelines.io import LineBlock, TraceFile
from mpg.pipelines.state import read_bucket_states
from mpg.pipelines.update import (
    CHANGED_DAYS,
    AccountChangedJobs,
    FindEndOfData,
    UpdateJobBuckets,
)
from mpg.transforms.parse import BlockParser
from mpg.transforms.steps import ParseTraceRecords, split_by_bucket
from tests.timeline import DAY, at, end, schedule, span, submit

CATALOG = load_catalog()


def at_us(clock: str) -> int:
    """A timeline clock as epoch microseconds."""
    stamp = datetime.datetime.fromisoformat(at(clock).replace("Z", "+00:00"))
    return int(stamp.timestamp()) * 1_000_000


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


def _context(staging: Path) -> UpdateContext:
    """A first run's context: no previous snapshot, every block's file new."""
    live = {b.file.name: "0" * 64 for b in _blocks()}
    return UpdateContext(
        staging=str(staging),
        previous=None,
        run_id="r1",
        live=live,
        new=frozenset(live),
        catalog=CATALOG,
        metric_versions=("v1",),
        previous_data_end=None,
    )


def _updated(p: beam.Pipeline, ctx: UpdateContext, buckets: int):  # -> tagged PCollections
    parsed = p | "Blocks" >> beam.Create(_blocks()) | ParseTraceRecords(CATALOG)
    retracted = p | "NoneRetracted" >> beam.Create([])
    return (parsed, retracted) | UpdateJobBuckets(ctx, buckets)


def _union(sets: Iterable[Iterable[str]]) -> list[str]:
    return sorted({x for s in sets for x in s})


@pytest.mark.parametrize("buckets", [1, 3])
def test_update_job_buckets(pipeline: BeamTestPipeline, tmp_path: Path, buckets: int) -> None:
    with pipeline as p:
        updated = _updated(p, _context(tmp_path), buckets)
        changed = updated.updates | beam.Map(lambda u: u.changed_jobs)
        assert_that(
            changed | beam.CombineGlobally(_union), equal_to([["ghost", "j"]]), label="changed"
        )
        # the unknown job's span: one reference to read back from runtime/b.jsonl, line 3
        refs = updated.quarantine | beam.Map(lambda w: (w[0], w[1][1].to_pylist(), w[1][2]))
        assert_that(
            refs | beam.Map(lambda r: (r[0], [x["line"] for x in r[1]], r[2].num_rows)),
            equal_to([("runtime/b.jsonl", [3], 0)]),
            label="refs",
        )
    states = read_bucket_states(tmp_path).group_by("source")
    counts = states.aggregate([(c, "sum") for c in ("accepted", "duplicates", "quarantined")])
    assert sorted(counts.to_pylist(), key=lambda r: r["source"]) == [
        {"source": "profiles", "accepted_sum": 0, "duplicates_sum": 0, "quarantined_sum": 0},
        {"source": "runtime", "accepted_sum": 2, "duplicates_sum": 1, "quarantined_sum": 1},
        {"source": "scheduler", "accepted_sum": 3, "duplicates_sum": 0, "quarantined_sum": 0},
    ]


def test_find_end_of_data_and_account_changed_jobs(
    pipeline: BeamTestPipeline, tmp_path: Path
) -> None:
    # 2 chips for 600 s: step 300 s productive (kept: last attempt of a FINISHED job), init 60 s,
    # idle 240 s; the end of data is the JOB_END at 00:10.
    ctx = _context(tmp_path)
    with pipeline as p:
        updated = _updated(p, ctx, 4)
        previous = p | "NoPreviousBuckets" >> beam.Create([])
        data_end, idle = (updated.updates, previous) | FindEndOfData()
        assert_that(data_end, equal_to([at_us("00:10")]), label="end")
        _ = (updated.updates, idle, data_end) | AccountChangedJobs(ctx)
    changed = json.loads((tmp_path / CHANGED_DAYS).read_text())
    assert sorted(changed) == [["chip_time_ledger", DAY], ["job_day_goodput", DAY]]
    (ledger,) = (tmp_path / "tables" / "chip_time_ledger").glob("day=*/*.parquet")
    rows = pq.read_table(ledger).to_pylist()
    assert {(r["job_id"], r["category"]): r["chip_s"] for r in rows} == {
        ("j", "productive_unprofiled"): 600.0,
        ("j", "init"): 120.0,
        ("j", "runtime_idle"): 480.0,
    }


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
