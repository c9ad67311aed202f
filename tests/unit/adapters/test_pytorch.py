"""`mpg.adapters.pytorch.convert` on small hand-written PyTorch profiler traces and FLOPs sidecars,
without the CLI: every span, profile record, synthesized event and quarantine row worked out by
hand from the rules of docs/adapters/pytorch.md. (Real traces through `mpg import` and `mpg run`:
tests/e2e/adapters/test_pytorch.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.conversion import convert, quarantined, records

BASE_NS = 1_793_599_200 * 10**9  # baseTimeNanoseconds: 2026-11-02T06:00:00Z


def _step(n: int | str, ts: float, dur: float, **more: Any) -> dict[str, Any]:
    """A host-side ProfilerStep event (`ts`, `dur` in µs)."""
    return {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": ts,
            "dur": dur, "pid": 1, "tid": 1, **more}  # fmt: skip


def _trace(path: Path, events: list[dict], **top: Any) -> Path:
    path.write_text(json.dumps({"traceEvents": events, **top}))
    return path


def _sidecar(trace: Path, flops: float, **more: Any) -> None:
    name = trace.name.removesuffix(".pt.trace.json")
    (trace.parent / f"{name}.flops.json").write_text(json.dumps({"flops_per_step": flops, **more}))


def _at(micros: int) -> str:
    """BASE_NS + micros µs as a canonical record writes it (a fraction only where there is one)."""
    return f"2026-11-02T06:00:00.{micros:06d}Z" if micros else "2026-11-02T06:00:00Z"


def test_two_ranks_each_with_its_spans_and_one_profile_record_per_step(tmp_path: Path) -> None:
    """Rank 0 runs step 2 at 1000 µs for 2000.25 µs (its end, 3000.25 µs, rounds to 3000) and
    step 3 at 3100 µs for 1999 µs; rank 1 runs them at 1010 µs for 2100 µs and at 3120 µs for
    1900 µs. Each rank's step is a span with its rank; a step's one profile record starts with
    its earliest span and lasts as long as the slowest rank (2100 and 1999 µs). FLOPs: the mean
    of the two sidecars' counts (1.0e6 and 1.2e6) times the 2 chips = 2.2e6. The device's copy
    of a step and other events are not records. The sidecars name the job, chips and generation:
    the job is submitted and holds its chips from the first step's start, and does not end."""
    device_copy = {**_step(2, 1100, 1500), "cat": "gpu_user_annotation"}
    op = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1200, "dur": 10}
    w0 = _trace(
        tmp_path / "w0.pt.trace.json",
        [_step(2, 1000, 2000.25), device_copy, op, _step(3, 3100, 1999)],
        baseTimeNanoseconds=BASE_NS,
        distributedInfo={"rank": 0, "world_size": 2},
    )
    w1 = _trace(
        tmp_path / "w1.pt.trace.json",
        [_step(2, 1010, 2100), _step(3, 3120, 1900)],
        baseTimeNanoseconds=BASE_NS,
        distributedInfo={"rank": 1, "world_size": 2},
    )
    job = {"job_id": "mlp", "chips": 2, "chip_generation": "gpu-a100"}
    _sidecar(w0, 1.0e6, **job)
    _sidecar(w1, 1.2e6, **job)
    conversion = convert("pytorch", [w0, w1])
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (4, 4, [])
    spans = [(s["step"], s["rank"], s["start"], s["end"]) for s in records(conversion, "runtime")]
    assert sorted(spans) == [
        (2, 0, _at(1000), _at(3000)),
        (2, 1, _at(1010), _at(3110)),
        (3, 0, _at(3100), _at(5099)),
        (3, 1, _at(3120), _at(5020)),
    ]
    assert {(s["job_id"], s["attempt"], s["kind"]) for s in records(conversion, "runtime")} == {
        ("mlp", 0, "step")
    }
    profile = {"job_id": "mlp", "model_flops": 2.2e6, "chips": 2, "flops_source": "flop_counter"}
    assert sorted(records(conversion, "profiles"), key=lambda p: p["step"]) == [
        {**profile, "ts": _at(1000), "step": 2, "step_time_s": pytest.approx(2100e-6, rel=1e-12)},
        {**profile, "ts": _at(3100), "step": 3, "step_time_s": pytest.approx(1999e-6, rel=1e-12)},
    ]
    assert records(conversion, "scheduler") == [
        {"type": "JOB_SUBMIT", "ts": _at(1000), "job_id": "mlp", "chips_requested": 2,
         "chip_generation": "gpu-a100", "workload_class": "training", "framework": "pytorch"},
        {"type": "TASK_SCHEDULE", "ts": _at(1000), "job_id": "mlp", "task_index": 0, "chips": 2},
    ]  # fmt: skip


def test_a_trace_without_wall_clock_time_placed_by_start_and_no_sidecar(tmp_path: Path) -> None:
    """No baseTimeNanoseconds and times from 0: --start places the earliest step there, the
    others keep their offsets; without a sidecar, spans only; --attempt numbers them."""
    trace = _trace(tmp_path / "t.pt.trace.json", [_step(7, 50, 100), _step(8, 160, 40)])
    options = ("--job-id", "j", "--attempt", "3", "--start", "2026-11-02T06:00:00Z")
    conversion = convert("pytorch", [trace], *options)
    assert records(conversion, "runtime") == [
        {"job_id": "j", "attempt": 3, "kind": "step", "start": _at(0), "end": _at(100), "step": 7},
        {"job_id": "j", "attempt": 3, "kind": "step", "start": _at(110), "end": _at(150),
         "step": 8},
    ]  # fmt: skip
    assert records(conversion, "profiles") == records(conversion, "scheduler") == []


def test_unusable_step_events_are_quarantined_by_their_place_in_the_events(
    tmp_path: Path,
) -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 1},
        _step(1, 1000, 500),
        {**_step(2, 2000, 500), "ph": "B"},
        _step("x", 3000, 500),
        {k: v for k, v in _step(4, 4000, 500).items() if k != "dur"},
        _step(5, 5000, -1),
        _step(6, 6000, 0),
        _step(7, "soon", 500),
    ]
    trace = _trace(tmp_path / "bad.pt.trace.json", events, baseTimeNanoseconds=BASE_NS)
    conversion = convert("pytorch", [trace], "--job-id", "j")
    assert (conversion.read, conversion.converted) == (7, 1)
    assert quarantined(conversion) == [
        ("bad.pt.trace.json", 3, "not a complete event (ph X)"),
        ("bad.pt.trace.json", 4, "bad step number"),
        ("bad.pt.trace.json", 5, "missing field: dur"),
        ("bad.pt.trace.json", 6, "end before start"),
        ("bad.pt.trace.json", 7, "zero duration"),
        ("bad.pt.trace.json", 8, "bad value: ts"),
    ]
    assert [s["step"] for s in records(conversion, "runtime")] == [1]
