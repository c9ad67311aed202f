"""The real pipeline against an independent calculation (tests/support/reference/), for every
metric version it knows.

The reference holds to the spec's worked examples (tests/unit/test_reference_examples.py); here
the real `mpg run` CLI, computing every version at once, and the reference both
read the same trace roots (simulated fleets, and a hand-made one full of the edge
cases the spec and docs/decisions.md settle) and every published table must agree with it: the
same rows, chip-seconds and ratios to 1e-9 relative, the same quarantined (source, file, line)
with the same class of reason and the same raw text, and the same record counts.

The `disputed` case holds the rules of docs/decisions.md that this reference first found the
pipeline breaking (a lower-case `t` in a timestamp, a `step` of the wrong type on an init span,
the lines before mid-stream damage in a .gz); it keeps them fixed.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mpg.simulate import simulate
from tests.support.reference import Reference, reason_class, reference
from tests.support.reference.compare import (
    JOB_DAY_NUMBERS,
    SLICE_NUMBERS,
    differences,
    numbers,
    read_tables,
    scalar,
)
from tests.support.reference.model import METRIC_VERSIONS

# --------------------------------------------------------------------------------------------
# Trace roots for the pipeline: simulated fleets and a hand-made one


def write_lines(path: Path, lines: list[str], gz: bool = False, ending: str = "\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line + ending for line in lines).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def js(**fields: Any) -> str:
    return json.dumps(fields)


def handmade_fleet(root: Path) -> None:
    """Small jobs, each exercising rules of the spec or docs/decisions.md."""
    day = "2026-11-20"
    nxt = "2026-11-21"

    def t(hms: str, d: str = day) -> str:
        return f"{d}T{hms}Z"

    def submit(job: str, ts: str, chips: int, gen: str, wc: str, fw: str, **extra: Any) -> str:
        return js(
            type="JOB_SUBMIT",
            ts=ts,
            job_id=job,
            chips_requested=chips,
            chip_generation=gen,
            workload_class=wc,
            framework=fw,
            **extra,
        )

    def ev(kind: str, ts: str, job: str, task: int, chips: int | None = None) -> str:
        if chips is None:
            return js(type=kind, ts=ts, job_id=job, task_index=task)
        return js(type=kind, ts=ts, job_id=job, task_index=task, chips=chips)

    def end(ts: str, job: str, state: str) -> str:
        return js(type="JOB_END", ts=ts, job_id=job, state=state)

    def span(job: str, attempt: int, kind: str, start: str, stop: str, step: int | None = None):
        if step is None:
            return js(job_id=job, attempt=attempt, kind=kind, start=start, end=stop)
        return js(job_id=job, attempt=attempt, kind=kind, start=start, end=stop, step=step)

    def prof(job: str, ts: str, secs: float, flops: float, chips: int, **extra: Any) -> str:
        return js(
            job_id=job, ts=ts, step=1, step_time_s=secs, model_flops=flops, chips=chips, **extra
        )

    sched_a = [
        # j1: training, two tasks, same-instant release+schedule (schedule listed first),
        # two schedules of one task at one instant (larger wins), attempts that skip numbers.
        submit("j1", t("01:00:00"), 8, "tpu-v5p", "training", "jax", priority=5, owner="o"),
        ev("TASK_SCHEDULE", t("01:00:00"), "j1", 0, 4),
        ev("TASK_SCHEDULE", t("01:01:00"), "j1", 1, 2),
        ev("TASK_SCHEDULE", t("01:01:00"), "j1", 1, 4),
        ev("TASK_SCHEDULE", t("01:30:00"), "j1", 1, 4),
        ev("TASK_EVICT", t("01:30:00"), "j1", 1),
        ev("TASK_FAIL", t("02:00:00"), "j1", 0),
        ev("TASK_FAIL", t("02:00:00"), "j1", 0),  # exact duplicate
        ev("TASK_FINISH", t("02:01:00"), "j1", 7),  # a task holding nothing: no change
        ev("TASK_SCHEDULE", t("02:05:00"), "j1", 0, 4),
        end(t("03:00:00"), "j1", "FAILED"),
        # j2: serving over midnight, conflicting JOB_SUBMIT (the later one is quarantined),
        # the same JOB_SUBMIT again written with +00:00 and extra fields (a duplicate).
        submit("j2", t("22:00:00"), 4, "gpu-h100", "serving", "pytorch"),
        submit("j2", "2026-11-20T22:00:00+00:00", 4, "gpu-h100", "serving", "pytorch", x=1),
        submit("j2", t("22:30:00"), 2, "gpu-h100", "serving", "pytorch"),
        ev("TASK_SCHEDULE", "2026-11-20T23:00:00.5+01:00", "j2", 0, 4),
        end(t("01:00:00", nxt), "j2", "CANCELLED"),
        end(t("04:00:00", nxt), "j2", "FINISHED"),  # conflicting JOB_END: later, quarantined
    ]
    sched_b = [
        # j3: training, open (no JOB_END), one schedule covers all; a JOB_END before its
        # JOB_SUBMIT is quarantined and the job stays open.
        submit("j3", t("10:00:00"), 2, "gpu-a100", "training", "other"),
        ev("TASK_SCHEDULE", t("09:00:00"), "j3", 0, 2),  # before the submit: already held
        end(t("09:30:00"), "j3", "FINISHED"),
        # j4: bulk inference with no task ever scheduled (all scheduling).
        submit("j4", t("12:00:00"), 16, "tpu-v7", "bulk_inference", "tensorflow"),
        end(t("12:10:00"), "j4", "FINISHED"),
        # j5: training that ends FINISHED: its last attempt's steps are all kept.
        submit("j5", t("05:00:00"), 1, "gpu-b200", "training", "pytorch", topology="1x1"),
        ev("TASK_SCHEDULE", t("05:00:00"), "j5", 3, 1),
        ev("TASK_LOST", t("05:20:00"), "j5", 3),
        ev("TASK_SCHEDULE", t("05:21:00"), "j5", 3, 1),
        end(t("06:00:00"), "j5", "FINISHED"),
        "",  # an empty line in the middle of a file
        "   ",  # whitespace only
        # malformed records, one rule each
        "{not json",
        "[1, 2]",
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=0),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=0, chips=8.0),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=0, chips="8"),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=0, chips=True),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=0, chips=2**64),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=-1, chips=1),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="j5", task_index=0, chips=None),
        js(type="TASK_SCHEDULE", ts="2026-11-20T24:00:00Z", job_id="j5", task_index=0, chips=1),
        js(type="TASK_SCHEDULE", ts="2026-11-20T05:00:60Z", job_id="j5", task_index=0, chips=1),
        js(type="TASK_SCHEDULE", ts="2026-11-20T05:00:00", job_id="j5", task_index=0, chips=1),
        js(type="TASK_SCHEDULE", ts=t("05:00:00"), job_id="", task_index=0, chips=1),
        js(type="TASK_REBOOT", ts=t("05:00:00"), job_id="j5", task_index=0),
        js(type="JOB_END", ts=t("06:00:00"), job_id="j5", state="DONE"),
        submit("bad1", t("05:00:00"), 0, "tpu-v4", "training", "jax"),
        submit("bad2", t("05:00:00"), 1, "tpu-v9", "training", "jax"),
        submit("bad3", t("05:00:00"), 1, "tpu-v4", "finetune", "jax"),
        submit("bad4", t("05:00:00"), 1, "tpu-v4", "training", "mxnet"),
        ev("TASK_SCHEDULE", t("05:00:00"), "ghost", 0, 1),  # unknown job, twice:
        ev("TASK_SCHEDULE", t("05:00:00"), "ghost", 0, 1),  # one duplicate, one quarantined
        end(t("23:59:00"), "ghost", "FAILED"),  # unknown job: does not move the end of data
    ]
    write_lines(root / "scheduler" / "a.jsonl", sched_a)
    write_lines(root / "scheduler" / "nested" / "deeper" / "b.jsonl.gz", sched_b, gz=True)
    write_lines(root / "scheduler" / "notes.txt", ["not a trace file"])

    runtime_a = [
        # j1 attempt 0: steps 1-4, save of step 2 ends before attempt 2 starts (kept 1-2),
        # step 3 overlaps an async save, step 4 lost; attempt 2 (1 skipped) on a FAILED job.
        span("j1", 0, "init", t("01:00:00"), t("01:02:00")),
        span("j1", 0, "compile", t("01:01:30"), t("01:05:00"), step=9),  # step ignored
        span("j1", 0, "step", t("01:05:00"), t("01:10:00"), 1),
        span("j1", 0, "step", t("01:10:00"), t("01:15:00"), 2),
        span("j1", 0, "checkpoint_save", t("01:15:00"), t("01:25:00"), 2),
        span("j1", 0, "step", t("01:15:00"), t("01:20:00"), 3),
        span("j1", 0, "step", t("01:20:00"), t("01:35:00"), 4),
        span("j1", 0, "data_wait", t("01:35:00"), t("01:40:00")),
        span("j1", 0, "checkpoint_save", t("01:50:00"), t("02:06:05"), 4),  # ends too late
        span("j1", 2, "init", t("02:06:00"), t("02:06:10")),  # attempt 0 ends here
        # fractions beyond microseconds are truncated, not rounded
        span("j1", 2, "checkpoint_restore", "2026-11-20T02:06:20.1234567Z", t("02:07:00"), 2),
        span("j1", 2, "step", t("02:07:00"), t("02:20:00"), 3),
        span("j1", 2, "checkpoint_save", t("02:20:00"), t("02:21:00"), 3),
        span("j1", 2, "step", t("02:21:00"), t("02:40:00"), 4),
        span("j1", 2, "step", t("02:40:00"), t("02:40:00"), 5),  # zero length
        span("j2", 0, "init", t("23:00:01"), t("23:10:00")),
        span("j2", 0, "step", t("23:10:00"), t("00:20:00", nxt), 1),  # across midnight
        span("j2", 0, "step", t("00:20:00", nxt), t("01:30:00", nxt), 2),  # past JOB_END
        # j3 (open): spans before its submit and after; its last attempt's steps are kept.
        span("j3", 0, "data_wait", t("09:50:00"), t("10:05:00")),
        span("j3", 0, "step", t("10:05:00"), t("10:30:00"), 1),
        span("j3", 1, "step", t("10:40:00"), t("11:00:00"), 1),
    ]
    runtime_b = [
        # j5: a FINISHED training job; attempt 0 unsaved and lost, attempt 1 kept.
        span("j5", 0, "step", t("05:01:00"), t("05:19:00"), 1),
        span("j5", 1, "checkpoint_restore", t("05:21:00"), t("05:22:00"), 0),
        span("j5", 1, "step", t("05:22:00"), t("05:50:00"), 1),
        span("j5", 1, "step", t("05:22:00"), t("05:50:00"), 1),  # exact duplicate
        span("j4", 0, "init", t("12:00:00"), t("12:05:00")),
        # the latest accepted span end: the end of data for the open job j3
        span("j2", 0, "step", t("01:30:00", nxt), t("03:00:00", nxt), 3),
        # malformed spans
        span("j1", 0, "step", t("01:05:00"), t("01:00:00"), 1),  # end < start
        span("j1", 0, "warmup", t("01:05:00"), t("01:10:00")),
        span("j1", 0, "step", t("01:05:00"), t("01:10:00")),  # step missing
        span("j1", -1, "init", t("01:05:00"), t("01:10:00")),
        js(job_id="j1", attempt=0, kind="init", start=t("01:00:00"), end="tomorrow"),
        span("nobody", 0, "init", t("01:05:00"), t("23:59:59", nxt)),  # unknown job
    ]
    write_lines(root / "runtime" / "r1.jsonl.gz", runtime_a, gz=True)
    write_lines(root / "runtime" / "r2.jsonl", runtime_b, ending="\r\n")

    profiles = [
        prof("j1", t("01:10:00"), 300.0, 1.0e18, 8, flops_source="hlo_unoptimized"),
        prof("j1", t("02:30:00"), 300, 2.0e17, 4),  # its own chips count
        prof("j2", t("23:30:00"), 10.0, 1.0e15, 4),
        prof("j2", "2026-11-21T00:30:00+02:00", 10.0, 1.0e15, 4),  # day 2026-11-20 in UTC
        prof("j2", t("00:40:00", nxt), 20.0, 3.0e15, 4),
        prof("j5", t("07:00:00", nxt), 1.0, 1.0e12, 1),  # a day with no wanted time: no row
        prof("j3", t("10:10:00"), 5.0, 2.0e15, 2, hbm_bytes=1e12),
        prof("j3", t("10:10:00"), 5.0, 2.0e15, 2, hbm_bytes=1e12, note="retry"),  # duplicate
        js(job_id="j3", ts=t("10:10:00"), step=1, step_time_s=0, model_flops=1e15, chips=2),
        js(job_id="j3", ts=t("10:10:00"), step=1, step_time_s=-1.0, model_flops=1e15, chips=2),
        js(job_id="j3", ts=t("10:10:00"), step=1, step_time_s=1.0, chips=2),
        js(job_id="j3", ts=t("10:10:00"), step=1, step_time_s=1.0, model_flops="1e15", chips=2),
        prof("stranger", t("10:10:00"), 5.0, 2.0e15, 2),
    ]
    write_lines(root / "profiles" / "p.jsonl", profiles)
    # NaN is not JSON but some exporters write it: out of range.
    nan = '{"job_id": "j3", "ts": "2026-11-20T10:10:00Z", "step": 1, "step_time_s": NaN, '
    nan += '"model_flops": 1e15, "chips": 2}'
    # a file without a final line break, an empty file, and a truncated .gz
    last = prof("j3", t("10:20:00"), 5.0, 1e15, 2)
    (root / "profiles" / "q.jsonl").write_text(nan + "\n" + last, encoding="utf-8")
    (root / "profiles" / "empty.jsonl").write_bytes(b"")
    broken = [span("j4", 0, "init", t(f"12:0{i}:00"), t(f"12:0{i}:30")) for i in range(8)]
    whole = gzip.compress("".join(line + "\n" for line in broken).encode(), mtime=0)
    (root / "runtime" / "broken.jsonl.gz").write_bytes(whole[: len(whole) * 2 // 3])


def disputed_fleet(root: Path) -> None:
    """Rules of docs/decisions.md on which the pipeline once disagreed (one job, d1)."""

    def t(hms: str) -> str:
        return f"2026-11-20T{hms}Z"

    scheduler = [
        js(
            type="JOB_SUBMIT",
            ts=t("01:00:00"),
            job_id="d1",
            chips_requested=4,
            chip_generation="tpu-v5e",
            workload_class="serving",
            framework="jax",
        ),
        # Timestamps: "date, T/t/space, HH:MM:SS ..." -- a lower-case 't' is RFC 3339.
        js(type="TASK_SCHEDULE", ts="2026-11-20t01:00:00Z", job_id="d1", task_index=0, chips=4),
        js(type="JOB_END", ts=t("03:00:00"), job_id="d1", state="FINISHED"),
    ]
    write_lines(root / "scheduler" / "events.jsonl", scheduler)
    # "step on init, compile, data_wait: ignored" -- whatever its value.
    init = js(job_id="d1", attempt=0, kind="init", start=t("01:00:00"), end=t("01:05:00"))
    init = init[:-1] + ', "step": "warmup"}'
    write_lines(root / "runtime" / "spans.jsonl", [init])
    # A .gz damaged mid-stream: "every whole line before the damage is read; the unreadable
    # rest is one record at the line number where reading stopped".
    steps = [
        js(
            job_id="d1",
            attempt=0,
            kind="step",
            start=t(f"01:{5 + 2 * i:02d}:00"),
            end=t(f"01:{7 + 2 * i:02d}:00"),
            step=i + 1,
        )
        for i in range(20)
    ]
    data = "".join(line + "\n" for line in steps).encode()
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)  # gzip wrapper
    head = deflate.compress(data[: len(data) // 2]) + deflate.flush(zlib.Z_FULL_FLUSH)
    damaged = bytearray(head + deflate.compress(data[len(data) // 2 :]) + deflate.flush())
    damaged[len(head)] |= 0x06  # the block after the flush point: invalid block type
    (root / "runtime" / "damaged.jsonl.gz").write_bytes(bytes(damaged))


SIMULATED = {
    "sim-seed1": (1, 12, 1),
    "sim-seed7": (7, 20, 2),
    "sim-seed23": (23, 30, 3),
    "sim-seed2026": (2026, 16, 2),
}
CASES = [*SIMULATED, "handmade", "disputed"]


@dataclass
class Published:
    root: Path
    out: Path
    refs: dict[str, Reference]  # per metric version
    tables: dict[str, list[dict[str, Any]]]

    def rows(self, table: str, version: str) -> list[dict[str, Any]]:
        """The published rows of one metric version."""
        return [r for r in self.tables[table] if r["metric_version"] == version]

    @property
    def inputs(self) -> Reference:
        """The reference for the quarantine and record counts, which no metric version changes."""
        return self.refs["v1"]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Published]:
    """Every case's trace root run through the real CLI (all at once) and the reference."""
    base = tmp_path_factory.mktemp("reference")
    runs = {}
    for name in CASES:
        root, out = base / name / "traces", base / name / "out"
        if name in SIMULATED:
            seed, jobs, days = SIMULATED[name]
            simulate(seed=seed, jobs=jobs, days=days, out=root)
        elif name == "handmade":
            handmade_fleet(root)
        else:
            disputed_fleet(root)
        command = [sys.executable, "-m", "mpg.cli", "run", "--traces", str(root), "--out", str(out)]
        command += [arg for version in METRIC_VERSIONS for arg in ("--metric-version", version)]
        runs[name] = (
            root,
            out,
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True),
        )
    results = {}
    for name, (root, out, process) in runs.items():
        refs = {version: reference(root, version) for version in METRIC_VERSIONS}
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, f"{name}: mpg run failed:\n{output[-3000:]}"
        results[name] = Published(root, out, refs, read_tables(out / "mpg.duckdb"))
    return results


@pytest.mark.parametrize("version", METRIC_VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_job_day_goodput(case: str, version: str, published: dict[str, Published]) -> None:
    p, ref = published[case], published[case].refs[version]
    rows = p.rows("job_day_goodput", version)
    got = {(r["day"], r["job_id"]): r for r in rows}
    assert len(got) == len(rows), "one row per job-day"
    problems = differences(ref.job_days, got, numbers(JOB_DAY_NUMBERS))
    for key in ref.job_days.keys() & got.keys():
        ours, theirs = ref.job_days[key], got[key]
        for name in ("workload_class", "framework", "chip_generation", "chips_requested"):
            if getattr(ours, name) != theirs[name]:
                problems.append(f"{key} {name}: expected {getattr(ours, name)}, got {theirs[name]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", METRIC_VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_chip_time_ledger(case: str, version: str, published: dict[str, Published]) -> None:
    ref = published[case].refs[version]
    rows = published[case].rows("chip_time_ledger", version)
    got = {(r["day"], r["job_id"], r["category"]): r["chip_s"] for r in rows}
    assert len(got) == len(rows), "one row per job-day and category"
    # A zero row may be left out: a row missing on one side counts as zero there.
    expected = {k: ref.ledger.get(k, 0.0) for k in ref.ledger.keys() | got.keys()}
    got = {k: got.get(k, 0.0) for k in expected}
    problems = differences(expected, got, scalar)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", METRIC_VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_goodput_by_slice(case: str, version: str, published: dict[str, Published]) -> None:
    ref = published[case].refs[version]
    rows = published[case].rows("goodput_by_slice", version)
    got = {(r["day"], r["workload_class"], r["framework"], r["chip_generation"]): r for r in rows}
    assert len(got) == len(rows), "one row per day and slice"
    problems = differences(ref.slices, got, numbers(SLICE_NUMBERS))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", CASES)
def test_quarantine(case: str, published: dict[str, Published]) -> None:
    p = published[case]
    got = {}
    for r in p.tables["quarantine"]:
        key = (r["source"], r["file"], r["line"])
        assert key not in got, f"two quarantine rows for {key}"
        got[key] = (reason_class(r["reason"]), r["reason"], r["raw"])
    expected = {
        (q.source, q.file, q.line): (reason_class(q.reason), q.reason, q.raw)
        for q in p.inputs.quarantine
    }

    def same_class(ours: tuple[str, str, str], theirs: tuple[str, str, str]) -> list[str]:
        """Reasons compare by class (wording may differ); the raw text exactly."""
        out = []
        if ours[0] != theirs[0]:
            out.append(f"reason: expected {ours[1]!r}, got {theirs[1]!r}")
        if ours[2] != theirs[2]:
            out.append(f"raw: expected {ours[2][:80]!r}, got {theirs[2][:80]!r}")
        return out

    problems = differences(expected, got, same_class)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", CASES)
def test_record_counts(case: str, published: dict[str, Published]) -> None:
    p = published[case]
    got = {
        r["source"]: (r["records_read"], r["accepted"], r["duplicates"], r["quarantined"])
        for r in p.tables["record_counts"]
    }
    expected = {
        source: (c.read, c.accepted, c.duplicates, c.quarantined)
        for source, c in p.inputs.counts.items()
    }
    assert got == expected
    for read, accepted, duplicates, quarantined in got.values():
        assert read == accepted + duplicates + quarantined
