"""`mpg.adapters.ml_goodput.convert` on a few hand-written records of ml-goodput-measurement's
recorder and Orbax's checkpoint logger, without the CLI: every span and synthesized scheduler
event worked out by hand from the rules of docs/adapters/ml-goodput.md. (The real recorder's
records through `mpg import` and `mpg run`, cross-checked against the package's own calculator:
tests/e2e/adapters/test_ml_goodput.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.conversion import convert, quarantined, records

T = 1_793_599_200  # 2026-11-02T06:00:00Z
CHIPS = ("--chips", "4", "--chip-generation", "tpu-v5e")


def _log(path: Path, *lines: dict | str) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _at(seconds: float) -> str:
    """T + seconds, as a canonical record writes it."""
    whole, micros = divmod(round(seconds * 1e6), 1_000_000)
    text = f"2026-11-02T06:{whole // 60:02d}:{whole % 60:02d}"
    return f"{text}.{micros:06d}Z" if micros else f"{text}Z"


def _span(kind: str, attempt: int, start: float, end: float, step: int | None = None) -> dict:
    span = {"job_id": "j", "attempt": attempt, "kind": kind, "start": _at(start), "end": _at(end)}
    return span if step is None else {**span, "step": step}


def test_a_clean_run_with_its_synthesized_job(tmp_path: Path) -> None:
    """Init 1-5 s, compilation 5-10 s, three steps of 10 s each running to the next step's start
    (the last to the job's end at 40 s); no step outlasts the others, so none gives time to
    compile. --chips and --chip-generation synthesize the job: submitted and given every chip at
    its job_start_time, FINISHED at its job_end_time."""
    log = _log(
        tmp_path / "run.jsonl",
        {"job_name": "j", "job_start_time": T},
        {"job_name": "j", "tpu_init_start_time": T + 1},
        {"job_name": "j", "tpu_init_end_time": T + 5},
        {"job_name": "j", "training_prep_start_time": T + 5},
        {"job_name": "j", "training_prep_end_time": T + 10},
        *({"job_name": "j", "step_count": n, "step_start_time": T + 10 + 10 * n} for n in range(3)),
        {"job_name": "j", "job_end_time": T + 40},
    )
    conversion = convert("ml-goodput", [log], *CHIPS)
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (9, 9, [])
    assert sorted(records(conversion, "runtime"), key=lambda s: s["start"]) == [
        _span("init", 0, 1, 5),
        _span("compile", 0, 5, 10),
        _span("step", 0, 10, 20, step=0),
        _span("step", 0, 20, 30, step=1),
        _span("step", 0, 30, 40, step=2),
    ]
    assert records(conversion, "scheduler") == [
        {"type": "JOB_SUBMIT", "ts": _at(0), "job_id": "j", "chips_requested": 4,
         "chip_generation": "tpu-v5e", "workload_class": "training", "framework": "jax"},
        {"type": "TASK_SCHEDULE", "ts": _at(0), "job_id": "j", "task_index": 0, "chips": 4},
        {"type": "JOB_END", "ts": _at(40), "job_id": "j", "state": "FINISHED"},
    ]  # fmt: skip


def test_a_restart_from_a_checkpoint(tmp_path: Path) -> None:
    """Attempt 0: steps at 10, 30 and 40 s, a blocking save of step 2 at 50-55 s, then a crash.
    Step 2 runs to the attempt's last evidence (the save's end, 55 s) less the save: 40-50 s.
    The first step lasts 20 s against the others' mean of 10 (step 1: 10 s; step 2: 10 s of its
    own), so its first 10 s are compilation. Attempt 1 starts at 100 s (a job_start_time):
    a restore of step 2 at 102-105 s, steps 3 and 4 at 110 and 120 s, the job's end at 130 s;
    its first step is no longer than the other, so no compilation. Orbax's records name no job:
    they take the file's one job_name. Without --chips no scheduler events are written."""
    log = _log(
        tmp_path / "run.jsonl",
        {"job_name": "j", "job_start_time": T},
        {"job_name": "j", "step_count": 0, "step_start_time": T + 10},
        {"job_name": "j", "step_count": 1, "step_start_time": T + 30},
        {"job_name": "j", "step_count": 2, "step_start_time": T + 40},
        {"event_type": "save", "step": 2, "checkpoint_manager_blocking_start_time": T + 50,
         "checkpoint_manager_blocking_duration_secs": 5},
        {"job_name": "j", "job_start_time": T + 100},
        {"event_type": "restore", "step": 2, "checkpoint_manager_start_time": T + 102,
         "checkpoint_manager_duration_secs": 3},
        {"job_name": "j", "step_count": 3, "step_start_time": T + 110},
        {"job_name": "j", "step_count": 4, "step_start_time": T + 120},
        {"job_name": "j", "job_end_time": T + 130},
    )  # fmt: skip
    conversion = convert("ml-goodput", [log])
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (10, 10, [])
    assert sorted(records(conversion, "runtime"), key=lambda s: s["start"]) == [
        _span("compile", 0, 10, 20),
        _span("step", 0, 20, 30, step=0),
        _span("step", 0, 30, 40, step=1),
        _span("step", 0, 40, 50, step=2),
        _span("checkpoint_save", 0, 50, 55, step=2),
        _span("checkpoint_restore", 1, 102, 105, step=2),
        _span("step", 1, 110, 120, step=3),
        _span("step", 1, 120, 130, step=4),
    ]
    assert records(conversion, "scheduler") == []


def test_unusable_records_are_quarantined_with_their_reasons(tmp_path: Path) -> None:
    """An init start with no end, a time outside 2000..2099, a negative step, a line that is
    not JSON, a record logged twice (counted once, not quarantined); `line` is the line in the
    file."""
    step = {"job_name": "j", "step_count": 0, "step_start_time": T + 10}
    log = _log(
        tmp_path / "run.jsonl",
        {"job_name": "j", "job_start_time": T},
        {"job_name": "j", "tpu_init_start_time": T + 1},
        {"job_name": "j", "step_count": 1, "step_start_time": 5_000_000_000},
        {"job_name": "j", "step_count": -1, "step_start_time": T + 5},
        "{not json",
        step,
        step,
        {"job_name": "j", "job_end_time": T + 20},
    )
    conversion = convert("ml-goodput", [log])
    assert (conversion.read, conversion.converted) == (8, 4)
    assert quarantined(conversion) == [
        ("run.jsonl", 2, "init_start without its end"),
        ("run.jsonl", 3, "out of range: step_start_time"),
        ("run.jsonl", 4, "not a step number: step"),
        ("run.jsonl", 5, "invalid JSON"),
    ]
    assert records(conversion, "runtime") == [_span("step", 0, 10, 20, step=0)]
