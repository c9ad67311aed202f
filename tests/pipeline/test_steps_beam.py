"""Each composite step run on its own: the Beam PTransforms under Beam's TestPipeline
(in-process FnApiRunner), fed with beam.Create and checked with assert_that as in Beam's own
examples; the bucket steps as the functions the transforms map, on an output folder in tmp."""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path

import apache_beam as beam
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from mpg.definitions.catalog import load_catalog
from mpg.definitions.config import OutputConfig
from mpg.definitions.costs import cost_rates, load_cost_catalog
from mpg.output.store import OutputStore, RunFiles
from mpg.pipelines.accounting import Accounting, AccountJobs, settle_bucket
from mpg.pipelines.buckets import RecordStore, gather_bucket, read_records, update_bucket
from mpg.pipelines.days import DayTables, MergeJobTableDays
from mpg.pipelines.finish import StatePlan
from mpg.pipelines.ingest import IngestTraceFiles, ParsedRef, by_bucket
from mpg.pipelines.io import (
    LineBlock,
    TraceFile,
    discover_trace_files,
    file_parts,
    read_line_blocks,
    stable_id,
)
from mpg.pipelines.quarantine import QuarantineSources, RecoverQuarantinedText
from mpg.pipelines.sinks import FILE_STATS, TABLE_CHANGES, Segment
from mpg.pipelines.update import UpdateJobRecords, UpdatePlan, build_update
from mpg.schemas import (
    COST_RATES,
    DATA_FILES,
    JOB_INDEX,
    MANIFEST,
    QUARANTINE,
    RECORD_COUNTS,
    SEGMENTS,
    SOURCES,
)
from mpg.transforms.parse import BlockParser, ParsedBlock
from mpg.transforms.reconcile import UNKNOWN_JOB, hash_range, job_hash_of
from mpg.transforms.steps import PARSERS, ParseTraceRecords, parse_block
from tests.support.files import SAMPLE_TRACES
from tests.support.timeline import DAY, at, end, schedule, span, submit

CATALOG = load_catalog()
RUN = "r1"


def at_us(clock: str) -> int:
    """A timeline clock as epoch microseconds."""
    stamp = datetime.datetime.fromisoformat(at(clock).replace("Z", "+00:00"))
    return int(stamp.timestamp()) * 1_000_000


def _text(records: list[dict | str]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def _block(source: str, records: list[dict | str], name: str = "a.jsonl") -> LineBlock:
    file = TraceFile(source, "/nowhere", f"{source}/{name}", 0, 0)
    return LineBlock(file=file, first_line=1, data=_text(records).encode())


SCHEDULER = [submit("j", "00:00", 2), schedule("j", "00:00", 0, 2), end("j", "00:10")]
RUNTIME = [span("j", "step", "00:00", "00:05", step=1), span("j", "init", "00:05", "00:06")]
# The second runtime file repeats the first span (an exporter retry) and names an unknown job.
FILES = {
    "scheduler/a.jsonl": [*SCHEDULER, "not json"],
    "runtime/a.jsonl": RUNTIME[:1],
    "runtime/b.jsonl": [RUNTIME[0], RUNTIME[1], span("ghost", "init", "00:00", "00:01")],
}


@pytest.fixture
def pipeline() -> BeamTestPipeline:
    return BeamTestPipeline(runner="FnApiRunner")


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    root = tmp_path / "traces"
    for name, records in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(_text(records))
    return root


def test_parse_trace_records(pipeline: BeamTestPipeline) -> None:
    blocks = [_block(name.split("/")[0], rows, name.split("/")[1]) for name, rows in FILES.items()]
    with pipeline as p:
        parsed = p | beam.Create(blocks) | ParseTraceRecords(CATALOG)
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


def test_blocks_parsed_at_once_come_out_each_once(pipeline: BeamTestPipeline) -> None:
    """More blocks than the process parses at once (PARSERS), in one bundle: each comes out
    once, as parsing it alone gives it, whether emitted while blocks arrive or at the bundle's
    end."""
    text = (SAMPLE_TRACES / "runtime" / "spans-001.jsonl").read_bytes()
    file = TraceFile("runtime", str(SAMPLE_TRACES), "runtime/spans-001.jsonl", len(text), 0)
    blocks = list(read_line_blocks(file, block_bytes=64 << 10))
    assert len(blocks) > 4 * PARSERS
    parser = BlockParser(CATALOG)
    alone = [_lines_and_rows(parse_block(parser, b)) for b in blocks]
    with pipeline as p:
        parsed = p | beam.Create(blocks, reshuffle=False) | ParseTraceRecords(CATALOG)
        assert_that(parsed | beam.Map(_lines_and_rows), equal_to(alone))


def _lines_and_rows(parsed: ParsedBlock) -> tuple[int, int, int]:
    """A parsed block's first and last record lines, and its records."""
    lines = parsed.records.column("line")
    return pc.min(lines).as_py(), pc.max(lines).as_py(), parsed.records.num_rows


def test_a_block_that_cannot_be_parsed_fails_the_pipeline() -> None:
    file = TraceFile("nonsense", "/nowhere", "nonsense/a.jsonl", 0, 0)
    blocks = [LineBlock(file, 1, b"{}\n"), *(_block("runtime", RUNTIME) for _ in range(3))]
    with pytest.raises(Exception, match="nonsense"), BeamTestPipeline(runner="FnApiRunner") as p:
        _ = p | beam.Create(blocks, reshuffle=False) | ParseTraceRecords(CATALOG)


# (bucket, source, records) of each part IngestTraceFiles cuts, per bucket count: one part per
# block and job bucket present. j's job hash is 2137352139 and ghost's 55808161: bucket 0 of 1 or
# of 2 (hashes below 2^31) for both; of 3 (cuts at 2^32/3 and 2*2^32/3) j's is 1 and ghost's 0,
# so runtime/b.jsonl is cut in two.
PARTS = {
    1: [(0, "scheduler", 3), (0, "runtime", 1), (0, "runtime", 3)],
    2: [(0, "scheduler", 3), (0, "runtime", 1), (0, "runtime", 3)],
    3: [(1, "scheduler", 3), (1, "runtime", 1), (1, "runtime", 2), (0, "runtime", 1)],
}

_COLLECTED: list = []  # what a pipeline in this process hands back (FnApiRunner runs here)


def _collect(element: object) -> None:
    _COLLECTED.append(element)


def _ingesting(
    p: beam.Pipeline, run: RunFiles, files: list[TraceFile], buckets: int, block_bytes: int
) -> dict:
    """IngestTraceFiles over the files' parts (`file_parts`), as `build_update` composes it."""
    parts = p | beam.Create(file_parts(files, block_bytes))
    return parts | IngestTraceFiles(run, CATALOG, buckets, block_bytes)


def _ingest(traces: Path, out: Path, buckets: int) -> list[tuple[int, ParsedRef]]:
    """IngestTraceFiles over `traces`; returns its (bucket, ParsedRef) pairs, and checks the
    FileStats it gives each file (lines, refused lines and the SHA-256 of the bytes) and the
    scratch file of the one refused line."""
    store, files = OutputStore(str(out)), discover_trace_files(str(traces))[0]
    run = store.run(RUN)
    _COLLECTED.clear()
    with BeamTestPipeline(runner="FnApiRunner") as p:
        ingested = _ingesting(p, run, files, buckets, 1 << 20)
        stats = ingested["files"] | beam.Map(
            lambda s: (s.name, s.lines_read, s.quarantined, s.sha256)
        )
        expected = [
            (f.name, len(FILES[f.name]), int(f.name == "scheduler/a.jsonl"),
             hashlib.sha256((traces / f.name).read_bytes()).hexdigest())
            for f in files
        ]  # fmt: skip
        assert_that(stats, equal_to(expected), label="stats")
        refused = [run.refused("scheduler", stable_id("scheduler/a.jsonl"), 1)]
        assert_that(ingested["refused"], equal_to(refused), label="refused")
        parts = ingested["parsed"] | beam.Map(lambda e: (e[0], e[1].source, e[1].rows))
        assert_that(parts, equal_to(PARTS[buckets]), label="parts")
        _ = ingested["parsed"] | beam.Map(_collect)
    return list(_COLLECTED)


def _ingested(traces: Path, out: Path, block_bytes: int) -> tuple[list, dict[str, pa.Table]]:
    """IngestTraceFiles over the files' parts at `block_bytes`: the FileStats, and each source's
    parsed records in (file, line) order."""
    store, files = OutputStore(str(out)), discover_trace_files(str(traces))[0]
    _COLLECTED.clear()
    with BeamTestPipeline(runner="FnApiRunner") as p:
        ingested = _ingesting(p, store.run(RUN), files, 2, block_bytes)
        _ = ingested["files"] | "Stats" >> beam.Map(_collect)
        _ = ingested["parsed"] | "Refs" >> beam.Map(_collect)
    stats = sorted((e for e in _COLLECTED if not isinstance(e, tuple)), key=lambda s: s.name)
    refs = [ref for e in _COLLECTED if isinstance(e, tuple) for ref in e[1:]]
    records = {
        source: pa.concat_tables(
            store.read_scratch(r.path, [r.batch]) for r in refs if r.source == source
        ).sort_by([("file", "ascending"), ("line", "ascending")])
        for source in {r.source for r in refs}
    }
    return stats, records


def test_a_file_read_in_parts_is_ingested_as_read_whole(tmp_path: Path) -> None:
    """The sample's uncompressed runtime file (1 MB) in four parts: the same records, line
    numbers and file stats (its lines, and the SHA-256 of all its bytes) as read whole."""
    parts = file_parts(discover_trace_files(str(SAMPLE_TRACES))[0], 16 << 10)
    split = [p.file.name for p in parts if p.end is not None]
    assert split == ["runtime/spans-001.jsonl"] * 3
    whole = _ingested(SAMPLE_TRACES, tmp_path / "whole", 1 << 20)
    in_parts = _ingested(SAMPLE_TRACES, tmp_path / "parts", 16 << 10)
    assert in_parts[0] == whole[0]
    assert in_parts[1].keys() == whole[1].keys() == set(SOURCES)
    for source, records in whole[1].items():
        assert in_parts[1][source].equals(records), source


@pytest.mark.parametrize("buckets", [1, 3])
def test_ingest_cuts_records_into_job_buckets_by_hash_range(
    traces: Path, tmp_path: Path, buckets: int
) -> None:
    refs = _ingest(traces, tmp_path / "out", buckets)
    store = OutputStore(str(tmp_path / "out"))
    rows = 0
    for bucket, ref in refs:
        low, high = hash_range(bucket, buckets)
        table = store.read_scratch(ref.path, [ref.batch])
        assert table.num_rows == ref.rows
        assert all(low <= h < high for h in table.column("job_hash").to_pylist())
        rows += ref.rows
    assert rows == 3 + 1 + 3  # every parsed record, the refused line not among them


ACCOUNTING = Accounting(CATALOG, ("v1",))


def _records(
    tmp_path: Path, traces: Path, buckets: int
) -> tuple[RecordStore, list, list, list[Segment]]:
    """A first run's record store, bucket updates, the day refs of the jobs the updates settled
    (those that ended) and the buckets' new segments (written by no one), for the fixture
    files."""
    out = tmp_path / "out"
    refs = _ingest(traces, out, buckets)
    records = RecordStore(OutputStore(str(out)).run(RUN), buckets, None, frozenset())
    per_bucket: dict[int, list[ParsedRef]] = {}
    for bucket, ref in refs:
        per_bucket.setdefault(bucket, []).append(ref)
    gathered = [gather_bucket(records, b, r) for b, r in sorted(per_bucket.items())]
    settled = [settle_bucket(records, ACCOUNTING, update_bucket(g)) for g in gathered]
    segments = [s for g in gathered for s in g.segments()]
    return records, [u for u, _ in settled], [d for _, days in settled for d in days], segments


@pytest.mark.parametrize("buckets", [1, 3])
def test_update_bucket_counts_every_record_on_its_job(
    traces: Path, tmp_path: Path, buckets: int
) -> None:
    records, updates, _, segments = _records(tmp_path, traces, buckets)
    store = records.run.store
    jobs = pa.concat_tables([store.read_scratch(u.jobs) for u in updates]).to_pylist()
    by_job = {r["job_id"]: r for r in jobs}
    assert (by_job["j"]["accepted_runtime"], by_job["j"]["duplicates_runtime"]) == (2, 1)
    assert (by_job["j"]["accepted_scheduler"], by_job["j"]["open"]) == (3, False)
    assert (by_job["ghost"]["quarantined_runtime"], by_job["ghost"]["submitted"]) == (1, False)
    refs = pa.concat_tables(
        [store.read_scratch(records.run.quarantine_refs(u.bucket)) for u in updates]
    ).to_pylist()
    assert [(r["file"], r["line"], r["reason"], r["job_id"]) for r in refs] == [
        ("runtime/b.jsonl", 3, UNKNOWN_JOB, "ghost")
    ]
    assert max(u.data_end or 0 for u in updates) == at_us("00:10")
    # the segments hold every parsed record of their jobs, the duplicate and the orphan included,
    # by job hash; nothing of the record store is written by the step
    stored = {s: sum(g.records.height for g in segments if g.source == s) for s in SOURCES}
    assert stored == {"scheduler": 3, "runtime": 4, "profiles": 0}
    runtime = pl.concat([g.records for g in segments if g.source == "runtime"])
    assert sorted(zip(runtime["job_id"], runtime["line"], strict=True)) == [
        ("ghost", 3, ), ("j", 1), ("j", 1), ("j", 2)
    ]  # fmt: skip
    run = records.run
    assert sorted((g.segment, g.source, g.records.height) for g in segments) == sorted(
        (run.segment_id(b), s, n) for b, s, n in SEGMENTS_OF[buckets]
    )
    assert not (tmp_path / "out" / "records").exists()


# (bucket, source, records) of each new segment, of 1 or of 3 buckets (PARTS: ghost's span is in
# bucket 0 of 3, j's records in bucket 1).
SEGMENTS_OF = {
    1: [(0, "scheduler", 3), (0, "runtime", 4)],
    3: [(1, "scheduler", 3), (1, "runtime", 3), (0, "runtime", 1)],
}


def _ledger(rows: pa.Table) -> dict[tuple[str, str], float]:
    return {(r["job_id"], r["category"]): r["chip_s"] for r in rows.to_pylist()}


def _checked(results: pa.Table) -> tuple[list[tuple[str, int]], bool]:
    """A bucket's source suites' results: (target, records checked) and whether all passed."""
    rows = results.to_pylist()
    checked: dict[str, int] = {}
    for r in rows:
        checked[r["target"]] = max(checked.get(r["target"], 0), r["element_count"])
    return sorted(checked.items()), all(r["success"] for r in rows)


def test_update_job_records(pipeline: BeamTestPipeline, traces: Path, tmp_path: Path) -> None:
    """The bucket update as one composite over 3 buckets (j's records in bucket 1, ghost's span
    in bucket 0): its new segments, handed on and written by no one; per bucket its update (the
    latest accepted instant: j's JOB_END), the source suites over its accepted records, and the
    day of the job it settled (j ended)."""
    out = tmp_path / "out"
    per_bucket: dict[int, list[ParsedRef]] = {}
    for bucket, ref in _ingest(traces, out, 3):
        per_bucket.setdefault(bucket, []).append(ref)
    records = RecordStore(OutputStore(str(out)).run(RUN), 3, None, frozenset())
    run = records.run
    with pipeline as p:
        updated = (
            p
            | beam.Create(sorted(per_bucket.items()))
            | UpdateJobRecords(records, ACCOUNTING, "mpg")
        )
        assert_that(
            updated.segments
            | "Segments" >> beam.Map(lambda g: (g.segment, g.source, g.records.height)),
            equal_to([(run.segment_id(b), s, n) for b, s, n in SEGMENTS_OF[3]]),
            label="segments",
        )
        assert_that(
            updated.updates | "Updates" >> beam.Map(lambda u: (u.bucket, u.data_end, u.vanished)),
            equal_to([(0, None, ()), (1, at_us("00:10"), ())]),
            label="updates",
        )
        assert_that(
            updated.checked | "Checked" >> beam.Map(_checked),
            equal_to(
                [
                    ([("profiles", 0), ("runtime", 0), ("scheduler", 0)], True),
                    ([("profiles", 0), ("runtime", 2), ("scheduler", 3)], True),
                ]
            ),
            label="checked",
        )
        assert_that(updated.days | "Days" >> beam.Keys(), equal_to([DAY]), label="days")
    assert not (out / "records").exists()


def test_account_and_merge_days(pipeline: BeamTestPipeline, traces: Path, tmp_path: Path) -> None:
    """AccountJobs, then MergeJobTableDays: each changed table's rows of the day, computed and
    written by no one (the day files are `WriteDayFiles`' job)."""
    # 2 chips for 600 s: step 300 s productive (kept: last attempt of a FINISHED job), init 60 s,
    # idle 240 s; the end of data is the JOB_END at 00:10.
    records, updates, settled, _ = _records(tmp_path, traces, 2)
    days = DayTables(records.run, {}, cost_rates(load_cost_catalog(), CATALOG, OutputConfig()))
    with pipeline as p:
        # each bucket's end of data (None: no data); the end of data is the latest
        ends = p | "Ends" >> beam.Create([at_us("00:05"), None, at_us("00:10")])
        accounted = (p | "Updates" >> beam.Create(updates), ends) | AccountJobs(
            records, ACCOUNTING, None
        )
        index_parts = [records.run.bucket_index(0)]  # j and ghost: bucket 0 of 2
        assert_that(accounted["jobs"], equal_to(index_parts), label="jobs")
        merged = (
            (accounted["days"], p | "Settled" >> beam.Create(settled))
            | beam.Flatten()
            | MergeJobTableDays(days)
        )
        assert_that(
            merged | "Sizes" >> beam.Map(lambda d: (d.table, d.day.isoformat(), d.rows.num_rows)),
            equal_to(
                [
                    ("job_day_goodput", DAY, 1),
                    ("chip_time_ledger", DAY, 3),
                    ("goodput_by_slice", DAY, 8),
                    ("checkpoint_advice", DAY, 1),
                    ("step_time_stats", DAY, 1),
                    ("chip_time_cost", DAY, 3),
                ]
            ),
            label="days",
        )
        ledger = merged | beam.Filter(lambda d: d.table == "chip_time_ledger")
        assert_that(
            ledger | "Ledger" >> beam.Map(lambda d: _ledger(d.rows)),
            equal_to(
                [
                    {
                        ("j", "productive_unprofiled"): 600.0,
                        ("j", "init"): 120.0,
                        ("j", "runtime_idle"): 480.0,
                    }
                ]
            ),
            label="ledger",
        )
    assert not (tmp_path / "out" / "tables").exists()
    # j ended: its update accounted it (one day's refs), leaving no records to read again
    assert [day for day, _ in settled] == [DAY]
    assert sum(read_records(records.run, u.records).records for u in updates) == 0
    index = records.run.store.read_scratch(index_parts[0]).to_pylist()
    assert [(r["job_id"], r["accepted_runtime"], r["open"]) for r in index] == [
        ("ghost", 0, False),  # a job with no scheduler record: its span refused, not accepted
        ("j", 2, False),
    ]


def test_recover_quarantined_text(pipeline: BeamTestPipeline, traces: Path, tmp_path: Path) -> None:
    """The buckets' quarantine references -> one scratch file per input file they point into,
    with each refused line's text read again from that file."""
    records, updates, _, _ = _records(tmp_path, traces, 3)
    run = records.run
    files = {f.name: f for f in discover_trace_files(str(traces))[0]}
    sources = QuarantineSources(run, files, previous=None, unchanged=frozenset())
    with pipeline as p:
        recovered = (
            p
            | beam.Create([run.quarantine_refs(u.bucket) for u in updates])
            | RecoverQuarantinedText(sources)
        )
        assert_that(recovered, equal_to([run.recovered(stable_id("runtime/b.jsonl"))]))
    rows = run.store.read_scratch(run.recovered(stable_id("runtime/b.jsonl"))).to_pylist()
    ghost = json.dumps(FILES["runtime/b.jsonl"][2])
    assert rows == [
        {"source": "runtime", "file": "runtime/b.jsonl", "line": 3, "reason": UNKNOWN_JOB,
         "raw": ghost, "job_id": "ghost"}
    ]  # fmt: skip


def test_bucket_parts_are_stored_compactly(tmp_path: Path) -> None:
    """A block's parts, one per job bucket, weigh in scratch about what the block's records
    weigh: each is a slice of one table, and the IPC file holds each slice's rows only, not the
    whole table once per bucket."""
    spans = [span(f"job-{i}", "step", "00:00", "00:01", step=i) for i in range(2000)]
    parser = BlockParser(CATALOG)
    block = _block("runtime", spans)
    parsed = parser.parse("runtime", block.file.name, block.data)
    parts = by_bucket(parsed.records, 64)
    assert len(parts) == 64
    assert sum(t.num_rows for _, t in parts) == 2000
    first = parts[0][1]
    assert job_hash_of(first.column("job_id")).to_pylist() == first.column("job_hash").to_pylist()
    low, high = hash_range(parts[0][0], 64)
    assert all(low <= h < high for h in first.column("job_hash").to_pylist())
    store = OutputStore(str(tmp_path))
    whole, cut = (store.run(RUN).parsed("runtime", name, 0) for name in ("whole", "cut"))
    store.write_scratch(whole, [pa.concat_tables([t for _, t in parts])])
    store.write_scratch(cut, [t for _, t in parts])
    # 64 record batches of ~30 rows carry their own headers; the whole table 64 times would
    # weigh 64x.
    assert store.storage.info(cut).size < 3 * store.storage.info(whole).size


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
                                "job_id": None,
                            }
                        ],
                    )
                ]
            ),
        )


def test_update_pipeline_on_a_first_run(traces: Path, tmp_path: Path) -> None:
    """The whole update graph (`build_update`) over the fixture files into an empty folder: what
    its sinks leave for the launcher, and the new snapshot's state and whole tables."""
    run = OutputStore(str(tmp_path / "out")).run(RUN)
    files = discover_trace_files(str(traces))[0]
    rates = cost_rates(load_cost_catalog(), CATALOG, OutputConfig())
    records = RecordStore(run, 2, None, frozenset())
    plan = UpdatePlan(
        new=tuple(files),
        planned=(),
        previous_buckets=(),
        records=records,
        accounting=ACCOUNTING,
        days=DayTables(run, {}, rates),
        quarantine=QuarantineSources(run, {f.name: f for f in files}, None, frozenset()),
        state=StatePlan(
            records=records,
            kept=MANIFEST.empty_table(),
            segments=None,
            quarantine=None,
            removed=pa.table(
                {"job_hash": pa.array([], pa.int64()), "job_id": pa.array([], pa.string())}
            ),
            traces=str(traces),
            rates=rates,
        ),
        block_bytes=1 << 20,
        expectations="mpg",
    )
    with BeamTestPipeline(runner="FnApiRunner") as p:
        build_update(p, plan)
    stats = run.store.read_parquet(run.result(FILE_STATS), MANIFEST).to_pylist()
    assert [(r["name"], r["lines_read"], r["quarantined"], r["sha256"]) for r in stats] == [
        (name, len(FILES[name]), int(name == "scheduler/a.jsonl"),
         hashlib.sha256((traces / name).read_bytes()).hexdigest())
        for name in sorted(FILES)
    ]  # fmt: skip
    changes = run.store.read_parquet(run.result(TABLE_CHANGES), DATA_FILES).to_pylist()
    # as the steps give them one by one (test_account_and_merge_days), sorted by table
    assert [(r["table"], r["day"].isoformat(), r["rows"]) for r in changes] == [
        ("checkpoint_advice", DAY, 1),
        ("chip_time_cost", DAY, 3),
        ("chip_time_ledger", DAY, 3),
        ("goodput_by_slice", DAY, 8),
        ("job_day_goodput", DAY, 1),
        ("step_time_stats", DAY, 1),
    ]
    assert [r["path"] for r in changes] == [run.data_file(r["table"], r["day"]) for r in changes]
    store = run.store
    manifest = store.read_parquet(run.state("manifest"), MANIFEST).to_pylist()
    assert [(r["name"], r["lines_read"]) for r in manifest] == [
        ("runtime/a.jsonl", 1), ("runtime/b.jsonl", 3), ("scheduler/a.jsonl", 4)
    ]  # fmt: skip
    # j and ghost: bucket 0 of 2, in its segment; ghost's one span refused (unknown job)
    segment = run.segment_id(0)
    index = store.read_parquet(run.state("jobs"), JOB_INDEX).to_pylist()
    assert [
        (r["job_id"], r["segment"], r["accepted_runtime"], r["duplicates_runtime"],
         r["quarantined_runtime"], r["rows_runtime"], r["rows_scheduler"])
        for r in index
    ] == [("ghost", segment, 0, 0, 1, 1, 0), ("j", segment, 2, 1, 0, 3, 3)]  # fmt: skip
    segments = store.read_parquet(run.state("segments"), SEGMENTS).to_pylist()
    assert segments == [
        {"segment": segment, "source": s, "path": store.segment(s, segment), "rows": n}
        for s, n in (("runtime", 4), ("scheduler", 3))
    ]
    quarantine = store.read_parquet(run.data_file("quarantine"), QUARANTINE).to_pylist()
    assert sorted((r["file"], r["line"], r["reason"], r["job_id"]) for r in quarantine) == [
        ("runtime/b.jsonl", 3, UNKNOWN_JOB, "ghost"),
        ("scheduler/a.jsonl", 4, "invalid JSON", None),
    ]
    counts = store.read_parquet(run.data_file("record_counts"), RECORD_COUNTS).to_pylist()
    # read = accepted + duplicates + quarantined, per source
    assert [
        (r["source"], r["records_read"], r["accepted"], r["duplicates"], r["quarantined"])
        for r in counts
    ] == [("scheduler", 4, 3, 0, 1), ("runtime", 4, 2, 1, 1), ("profiles", 0, 0, 0, 0)]
    assert store.read_parquet(run.data_file("cost_rates"), COST_RATES).equals(rates)
