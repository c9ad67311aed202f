"""`mpg.adapters.xplane.convert` without the CLI, on small captures built with the XPlane schema
(tests/support/adapters/xplane_captures.py): which launches are the steps' work, the steps on the
wall clock, the quarantine; and the adapter's parts on the real jax capture. Every expected value
is worked out by hand or taken from jax when the capture was made. (The real capture through
`mpg import` and `mpg run`: tests/e2e/adapters/test_xplane.py.)"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from mpg.adapters.xplane_cost import program_costs
from mpg.adapters.xplane_read import read_capture
from mpg.core.errors import TraceFileError
from tests.support.adapters.xplane_captures import (
    CAPTURE,
    EXPECTED,
    FIXTURE,
    MS,
    START_NS,
    build_capture,
    loss_module,
)
from tests.support.conversion import convert, quarantined, records


def test_schema_docstring_examples() -> None:
    import mpg.adapters.xplane_proto

    assert doctest.testmod(mpg.adapters.xplane_proto).failed == 0


def test_the_step_programs_are_those_launched_from_the_first_step_on() -> None:
    capture = read_capture(CAPTURE)
    first = capture.steps.get_column("start_ps").min()
    launched = capture.launches.filter(capture.launches["start_ps"] >= first)
    # The capture embeds the initialisers' programs too; two programs ran, once a step each.
    assert launched.height == 2 * len(EXPECTED["steps"])
    launched_ids = launched.get_column("program_id").unique().to_list()
    assert len(capture.programs) > len(launched_ids) == 2
    costs = program_costs({p: capture.programs[p] for p in launched_ids})
    assert sorted(costs.get_column("flops").to_list()) == sorted(
        p["flops"] for p in EXPECTED["programs"].values()
    )


def test_flops_per_step_count_every_launch_from_the_first_step_on(tmp_path: Path) -> None:
    """Dispatch runs ahead: launches start in other steps' annotations, and after the last one.
    What ran before the first step (an initialiser) is not the steps' work."""
    module, flops = loss_module()
    steps = [(0, 0, MS), (1, 2 * MS, MS), (2, 4 * MS, MS)]
    launches = [
        (5, 1, -MS),  # before the first step
        (5, 2, MS // 2),
        (5, 3, 2 * MS + 10),
        (5, 4, 2 * MS + 20),  # a second launch in step 1 (micro-batches, say)
        (5, 5, 9 * MS),  # after the last step: the device catching up
        (6, 6, 9 * MS + 10),  # a second program, the same module
    ]
    capture = tmp_path / "h.xplane.pb"
    capture.write_bytes(build_capture(steps, launches, {5: module, 6: module}))
    conversion = convert("xplane", [capture], "--job-id", "j", "--chips", "4")
    profiles = records(conversion, "profiles")
    assert [(p["step"], p["step_time_s"]) for p in profiles] == [(0, 0.001), (1, 0.001), (2, 0.001)]
    assert {p["model_flops"] for p in profiles} == {5 * flops / 3 * 4}
    assert [(s["start"], s["end"]) for s in records(conversion, "runtime")] == [
        ("2026-11-23T02:13:20Z", "2026-11-23T02:13:20.001000Z"),
        ("2026-11-23T02:13:20.002000Z", "2026-11-23T02:13:20.003000Z"),
        ("2026-11-23T02:13:20.004000Z", "2026-11-23T02:13:20.005000Z"),
    ]


def test_unusable_steps_are_quarantined(tmp_path: Path) -> None:
    steps = [
        (0, 0, 1 * MS),
        ("abc", 2 * MS, MS),
        (2, 4 * MS, 400),  # 0.4 ns: no duration at the spans' resolution
        ("7", 14 * MS, 3 * MS),  # a step number kept as text
    ]
    capture = tmp_path / "h.xplane.pb"
    capture.write_bytes(build_capture(steps, [], {}))
    options = ("--job-id", "j", "--chips", "4", "--cost-analysis", FIXTURE / "cost_analysis.json")
    conversion = convert("xplane", [capture], *map(str, options))
    assert (conversion.read, conversion.converted) == (4, 2)
    assert [(s["step"], s["start"]) for s in records(conversion, "runtime")] == [
        (0, "2026-11-23T02:13:20Z"),
        (7, "2026-11-23T02:13:20.014000Z"),
    ]
    assert [p["step_time_s"] for p in records(conversion, "profiles")] == [0.001, 0.003]
    assert quarantined(conversion) == [
        ("h.xplane.pb", 2, "step_num not an integer"),
        ("h.xplane.pb", 3, "step without a duration"),
    ]
    raw = conversion.quarantine.sort("line").get_column("raw").to_list()
    assert json.loads(raw[0]) == {
        "name": "train", "step_num": "abc", "start_ps": 2 * MS, "duration_ps": MS,
    }  # fmt: skip


def test_wall_clock_without_a_recorded_start(tmp_path: Path) -> None:
    """A capture whose lines are not re-based keeps absolute times; one that is re-based and
    does not say its start cannot be placed in time."""
    absolute = tmp_path / "abs.xplane.pb"
    absolute.write_bytes(build_capture([(0, 0, MS)], [], {}, line_ns=START_NS, start_ns=None))
    sidecar = str(FIXTURE / "cost_analysis.json")
    options = ("--job-id", "j", "--chips", "1", "--cost-analysis", sidecar)
    (span,) = records(convert("xplane", [absolute], *options), "runtime")
    assert (span["start"], span["end"]) == ("2026-11-23T02:13:20Z", "2026-11-23T02:13:20.001000Z")
    relative = tmp_path / "rel.xplane.pb"
    relative.write_bytes(build_capture([(0, 0, MS)], [], {}, start_ns=None))
    with pytest.raises(TraceFileError, match=r"times cannot be placed on the wall clock$"):
        convert("xplane", [relative], *options)


def test_a_cost_sidecar_and_the_synthesized_job(tmp_path: Path) -> None:
    """Two steps of 1 ms and 2 ms at 0 and 5 ms after the capture's start; one step's
    per-device cost from a sidecar (1e12 FLOPs, 2e9 bytes) times 4 chips on every record, its
    `ts` the span's start; --chip-generation submits the job and gives it every chip at the
    first step, and writes no JOB_END (a capture does not say how the job ended)."""
    capture = tmp_path / "h.xplane.pb"
    capture.write_bytes(build_capture([(0, 0, MS), (1, 5 * MS, 2 * MS)], [], {}))
    sidecar = tmp_path / "cost.json"
    sidecar.write_text(json.dumps({"flops": 1e12, "bytes accessed": 2e9}))
    options = ("--job-id", "j", "--chips", "4", "--chip-generation", "tpu-v5e", "--attempt", "2")
    conversion = convert("xplane", [capture], *options, "--cost-analysis", str(sidecar))
    profile = {"job_id": "j", "model_flops": 4e12, "hbm_bytes": 8e9, "chips": 4,
               "flops_source": "cost_analysis"}  # fmt: skip
    assert records(conversion, "profiles") == [
        {**profile, "ts": "2026-11-23T02:13:20Z", "step": 0, "step_time_s": 0.001},
        {**profile, "ts": "2026-11-23T02:13:20.005000Z", "step": 1, "step_time_s": 0.002},
    ]
    assert [(s["attempt"], s["end"]) for s in records(conversion, "runtime")] == [
        (2, "2026-11-23T02:13:20.001000Z"),
        (2, "2026-11-23T02:13:20.007000Z"),
    ]
    assert records(conversion, "scheduler") == [
        {"type": "JOB_SUBMIT", "ts": "2026-11-23T02:13:20Z", "job_id": "j", "chips_requested": 4,
         "chip_generation": "tpu-v5e", "workload_class": "training", "framework": "jax"},
        {"type": "TASK_SCHEDULE", "ts": "2026-11-23T02:13:20Z", "job_id": "j", "task_index": 0,
         "chips": 4},
    ]  # fmt: skip
