"""Named scenarios driven through Google's real `ml-goodput-measurement` package (pinned 0.2.3),
and its own `GoodputCalculator` over the records they log.

`make_ml_goodput_fixtures.py` writes each scenario's records to
`tests/fixtures/adapters/ml-goodput/`; the cross-check test runs the calculator on them again.
Nothing here talks to Google Cloud: both the recorder and the calculator take an in-memory logger
as `cloud_logger=`, and the calculator gets a fresh `cache_dir` per computation (it caches per job
name and silently reuses a stale cache).

Orbax is not installed: its checkpoint logger's save and restore records are written here with
the fields of Orbax's `SaveStepStatistics` / `RestoreStepStatistics` (orbax.checkpoint's
step_statistics.py), which is what the calculator reads.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Every scenario starts here; times are whole milliseconds after it.
T0 = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)


@dataclass
class MemoryLogger:
    """What `cloud_logger=` needs: entries written, and read back in order."""

    job_name: str
    entries: list[dict[str, Any]] = field(default_factory=list)

    def write_cloud_logging_entry(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)

    def read_cloud_logging_entries(
        self, start_time: object = None, end_time: object = None, last_entry_info: object = None
    ) -> tuple[list[dict[str, Any]], tuple[None, None]]:
        return list(self.entries), (None, None)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


class Script:
    """A job's log, written by the real recorder plus Orbax-shaped checkpoint records."""

    def __init__(self, job: str) -> None:
        from ml_goodput_measurement import goodput

        self.logger = MemoryLogger(job)
        self.recorder = goodput.GoodputRecorder(
            job_name=job, logger_name="mpg-fixture", logging_enabled=True, cloud_logger=self.logger
        )

    def start(self, t: float) -> None:
        self.recorder.record_job_start_time(at(t))

    def end(self, t: float) -> None:
        self.recorder.record_job_end_time(at(t))

    def init(self, t0: float, t1: float) -> None:
        self.recorder.record_tpu_init_start_time(at(t0))
        self.recorder.record_tpu_init_end_time(at(t1))

    def prep(self, t0: float, t1: float, restore: tuple[int, float, float] | None = None) -> None:
        self.recorder.record_training_preparation_start_time(at(t0))
        if restore is not None:
            self.restore(*restore)
        self.recorder.record_training_preparation_end_time(at(t1))

    def data(self, t0: float, t1: float) -> None:
        self.recorder.record_data_loading_start_time(at(t0))
        self.recorder.record_data_loading_end_time(at(t1))

    def custom(self, t0: float, t1: float, kind: str) -> None:
        self.recorder.record_custom_badput_event_start_time(at(t0), kind)
        self.recorder.record_custom_badput_event_end_time(at(t1), kind)

    def step(self, step: int, t: float) -> None:
        self.recorder.record_step_start_time(step, at(t))

    def save(self, step: int, t0: float, seconds: float) -> None:
        start = at(t0).timestamp()
        self.logger.write_cloud_logging_entry(
            {
                "step": step,
                "event_type": "save",
                "directory": "gs://fixture-bucket/checkpoints",
                "reached_preemption": False,
                "preemption_received_at": None,
                "synchronous": True,
                "wait_for_prev_start_time": start,
                "wait_for_prev_duration_secs": 0.0,
                "checkpointer_blocking_start_time": start,
                "checkpointer_blocking_duration_secs": seconds,
                "get_old_steps_start_time": start + seconds,
                "get_old_steps_duration_secs": 0.0,
                "checkpoint_manager_blocking_start_time": start,
                "checkpoint_manager_blocking_duration_secs": seconds,
            }
        )

    def restore(self, step: int, t0: float, seconds: float) -> None:
        start = at(t0).timestamp()
        self.logger.write_cloud_logging_entry(
            {
                "step": step,
                "event_type": "restore",
                "directory": "gs://fixture-bucket/checkpoints",
                "checkpointer_start_time": start,
                "checkpointer_duration_secs": seconds,
                "checkpoint_manager_start_time": start,
                "checkpoint_manager_duration_secs": seconds,
            }
        )

    def steps(
        self, first: int, last: int, t: float, every: float, saves: dict[int, float]
    ) -> float:
        """Steps `first..last`, one every `every` s from `t`; after each step in `saves`, a
        blocking save of that many seconds starting 2 s before the next step's start minus it.
        Returns the time the step after `last` would start."""
        for step in range(first, last + 1):
            self.step(step, t)
            if step in saves:
                self.save(step, t + every - 1 - saves[step], saves[step])
            t += every
        return t


def clean(s: Script) -> None:
    s.start(0)
    s.init(0, 20)
    s.prep(20, 50)
    s.data(50, 55)
    t = s.steps(0, 19, 55, 10, {9: 2, 19: 2})
    s.end(t + 1)


def restart_from_checkpoint(s: Script) -> None:
    s.start(0)
    s.init(0, 10)
    s.prep(10, 30)
    s.steps(0, 14, 30, 10, {9: 2})  # crashes while step 14 runs
    s.start(200)
    s.init(200, 210)
    s.prep(210, 240, restore=(9, 215, 10))
    t = s.steps(10, 24, 240, 10, {19: 2})
    s.end(t)


def crash_before_checkpoint(s: Script) -> None:
    s.start(0)
    s.init(0, 10)
    s.prep(10, 30)
    s.steps(0, 7, 30, 10, {})
    s.start(150)
    s.init(150, 160)
    s.prep(160, 180)
    t = s.steps(0, 11, 180, 10, {11: 3})
    s.end(t)


def data_loading_stalls(s: Script) -> None:
    s.start(0)
    s.init(0, 10)
    s.prep(10, 20)
    s.data(20, 32)  # the first batch, before any step
    t = 32.0
    for step in range(12):
        s.step(step, t)
        stall = 9 if step in (4, 8) else 1  # input pipeline stalls inside steps 4 and 8
        s.data(t + 1, t + 1 + stall)
        t += 4 + stall
    s.end(t)


def data_loading_in_steps(s: Script) -> None:
    """As MaxText's loop logs it: each step loads its batch after logging its start."""
    s.start(0)
    s.init(0, 10)
    s.prep(10, 20)
    t = 20.0
    for step in range(10):
        s.step(step, t)
        s.data(t, t + (6 if step == 0 else 1))  # the first batch waits on the input pipeline
        t += 15 if step == 0 else 10
    s.end(t)


def custom_badput(s: Script) -> None:
    s.start(0)
    s.init(0, 10)
    s.prep(10, 20)
    t = 20.0
    for step in range(15):
        s.step(step, t)
        if step in (4, 9):
            s.custom(t + 3, t + 9, "eval_step")
            t += 6
        if step == 12:
            s.custom(t + 2, t + 4, "sdc_check")
            t += 2
        t += 5
    s.end(t)


def restart_at_unlogged_step(s: Script) -> None:
    s.start(0)
    s.init(0, 10)
    s.prep(10, 30)
    s.steps(0, 9, 30, 10, {9: 2})  # saves step 9, then dies before step 10 starts
    s.start(180)
    s.init(180, 190)
    s.prep(190, 220, restore=(9, 195, 8))
    t = s.steps(10, 19, 220, 10, {})
    s.end(t)


def first_step_compiles(s: Script) -> None:
    s.start(0)
    s.init(0, 10)
    s.prep(10, 20)
    s.step(0, 20)  # jit compiles inside the first step: 40 s where the others take 10
    t = s.steps(1, 9, 60, 10, {})
    s.end(t)


def first_step_compiles_and_saves(s: Script) -> None:
    """Step 0 compiles (15 s), runs (10 s) and saves a checkpoint of itself (3 s, 45-48 s)
    before step 1 starts: 28 s where the others take 10 (docs/adapters/ml-goodput.md, difference
    8)."""
    s.start(0)
    s.init(0, 10)
    s.prep(10, 20)
    s.step(0, 20)
    s.save(0, 45, 3)
    t = s.steps(1, 9, 48, 10, {})
    s.end(t)


def restart_reruns_restored_step(s: Script) -> None:
    """A loop that resumes at the step it restored: attempt 1 restores step 9 and logs step 9
    again (docs/adapters/ml-goodput.md, difference 6)."""
    s.start(0)
    s.init(0, 10)
    s.prep(10, 30)
    s.steps(0, 12, 30, 10, {9: 2})  # saves step 9 at 127-129 s, dies while step 12 runs
    s.start(200)
    s.init(200, 210)
    s.prep(210, 240, restore=(9, 215, 10))
    t = s.steps(9, 19, 240, 10, {})
    s.end(t)


def restart_saves_restored_step_again(s: Script) -> None:
    """The same loop saving every 10th step: re-running step 9, it saves step 9 again, now in
    4 s (docs/adapters/ml-goodput.md, difference 7)."""
    s.start(0)
    s.init(0, 10)
    s.prep(10, 30)
    s.steps(0, 12, 30, 10, {9: 2})
    s.start(200)
    s.init(200, 210)
    s.prep(210, 240, restore=(9, 215, 10))
    t = s.steps(9, 19, 240, 10, {9: 4})
    s.end(t)


def restart_saves_restored_step_then_compiles(s: Script) -> None:
    """A loop that saves at the top of an iteration (its save of step N holds the state before
    step N, so it resumes at the step it restored): attempt 1 runs step 9 again, saves it first
    (4 s, 241-245 s), then compiles for 12 s and runs the step's 10 s (docs/adapters/ml-goodput.md,
    difference 8)."""
    s.start(0)
    s.init(0, 10)
    s.prep(10, 30)
    s.steps(0, 12, 30, 10, {})  # dies while step 12 runs
    s.save(9, 121, 2)  # at the top of step 9 (120-130 s)
    s.start(200)
    s.init(200, 210)
    s.prep(210, 240, restore=(9, 215, 10))
    s.step(9, 240)
    s.save(9, 241, 4)
    t = s.steps(10, 19, 267, 10, {})
    s.end(t)


SCENARIOS: dict[str, Callable[[Script], None]] = {
    "clean": clean,
    "restart_from_checkpoint": restart_from_checkpoint,
    "crash_before_checkpoint": crash_before_checkpoint,
    "data_loading_stalls": data_loading_stalls,
    "data_loading_in_steps": data_loading_in_steps,
    "custom_badput": custom_badput,
    "restart_at_unlogged_step": restart_at_unlogged_step,
    "first_step_compiles": first_step_compiles,
    "first_step_compiles_and_saves": first_step_compiles_and_saves,
    "restart_reruns_restored_step": restart_reruns_restored_step,
    "restart_saves_restored_step_again": restart_saves_restored_step_again,
    "restart_saves_restored_step_then_compiles": restart_saves_restored_step_then_compiles,
}


def record(name: str) -> list[dict[str, Any]]:
    """The records scenario `name` logs, in the order it logs them."""
    script = Script(f"fixture-{name.replace('_', '-')}")
    SCENARIOS[name](script)
    return script.logger.entries


def calculate(job: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The package's own figures for a job, in seconds: elapsed, productive, badput by type."""
    from ml_goodput_measurement import goodput

    with tempfile.TemporaryDirectory() as cache:
        calculator = goodput.GoodputCalculator(
            job_name=job,
            logger_name="mpg-fixture",
            cloud_logger=MemoryLogger(job, list(entries)),
            cache_dir=cache,
        )
        calculator.get_job_goodput(include_badput_breakdown=True)
        details = calculator.get_job_goodput_details()
    badput = {
        kind.name: (sum(v.values()) if isinstance(v, dict) else v)
        for kind, v in details["badput_time"].items()
    }
    return {
        "elapsed_s": details["total_elapsed_time"],
        "productive_s": sum(details["goodput_time"].values()),
        "badput_s": dict(sorted(badput.items())),
        "disruptions": details["disruption_count"],
    }


def write_fixtures(folder: Path) -> None:
    expected = {}
    for name in SCENARIOS:
        entries = record(name)
        lines = "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries)
        (folder / f"{name}.jsonl").write_text(lines, encoding="utf-8")
        expected[name] = calculate(entries[0]["job_name"], entries)
    (folder / "calculator.json").write_text(
        json.dumps(expected, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
