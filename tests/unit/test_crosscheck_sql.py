"""sql/crosscheck/job_day_chip_time.sql against the spec's worked examples.

The query reads each example's raw JSONL (a copy under tests/fixtures/spec_examples) itself, as
`make bench` runs it (tests/support/crosscheck.py), and every v1 number of the example's
job_day_goodput.csv and chip_time_ledger.csv must come out exactly.

    pytest -q tests/unit/test_crosscheck_sql.py
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest

from tests.support.crosscheck import crosscheck_job_days
from tests.support.files import SPEC_EXAMPLES

EXAMPLES = SPEC_EXAMPLES
INPUTS = {
    "scheduler": "scheduler/events.jsonl",
    "runtime": "runtime/spans.jsonl",
    "profiles": "profiles/profiles.jsonl",
}

# Ledger categories and the query's column for each; the three productive parts add up.
LEDGER_COLUMNS = {
    "ideal": "productive_chip_s",
    "program_loss": "productive_chip_s",
    "productive_unprofiled": "productive_chip_s",
    "lost_progress": "lost_progress_chip_s",
    "checkpoint_save": "checkpoint_save_chip_s",
    "checkpoint_restore": "checkpoint_restore_chip_s",
    "compile": "compile_chip_s",
    "init": "init_chip_s",
    "data_wait": "data_wait_chip_s",
    "runtime_idle": "runtime_idle_chip_s",
    "scheduling": "scheduling_chip_s",
}
CATEGORY_COLUMNS = sorted(set(LEDGER_COLUMNS.values()) - {"productive_chip_s"})
GOODPUT_COLUMNS = ("wanted_chip_s", "all_allocated_chip_s", "productive_chip_s")


def write_trace_root(lines_by_source: dict[str, list[str]], root: Path) -> Path:
    """JSONL lines as a trace root: ROOT/scheduler/events.jsonl, ROOT/runtime/spans.jsonl."""
    for source, lines in lines_by_source.items():
        path = root / INPUTS[source]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return root


def run_query(traces: Path) -> dict[tuple[str, str], dict[str, float]]:
    with duckdb.connect() as con:
        rows = crosscheck_job_days(con, str(traces)).to_pylist()
    return {(row.pop("day").isoformat(), row.pop("job_id")): row for row in rows}


def read_expected(example: Path) -> dict[tuple[str, str], dict[str, float]]:
    expected: dict[tuple[str, str], dict[str, float]] = {}
    with (example / "expected" / "job_day_goodput.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            assert row["metric_version"] == "v1"
            numbers = {c: float(row[c]) for c in GOODPUT_COLUMNS}
            numbers.update(dict.fromkeys(CATEGORY_COLUMNS, 0.0))
            numbers["ledger_productive_chip_s"] = 0.0
            expected[(row["day"], row["job_id"])] = numbers
    with (example / "expected" / "chip_time_ledger.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            assert row["metric_version"] == "v1"
            column = LEDGER_COLUMNS[row["category"]]
            if column == "productive_chip_s":
                column = "ledger_productive_chip_s"
            expected[(row["day"], row["job_id"])][column] += float(row["chip_s"])
    return expected


@pytest.mark.parametrize("name", ["tiny", "edges"])
def test_matches_worked_example(name: str) -> None:
    example = EXAMPLES / name  # a trace root itself (its expected/ folder is not read)
    got = run_query(example)
    expected = read_expected(example)

    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        row = got[key]
        assert want.pop("ledger_productive_chip_s") == pytest.approx(want["productive_chip_s"])
        for column, value in want.items():
            assert row[column] == pytest.approx(value, rel=1e-12, abs=0), (key, column)
        assert set(row) == set(want), key


@pytest.mark.parametrize("name", ["tiny", "edges"])
def test_ledger_adds_up_to_wanted(name: str) -> None:
    got = run_query(EXAMPLES / name)
    for key, row in got.items():
        allocated = row["productive_chip_s"] + sum(
            row[c] for c in CATEGORY_COLUMNS if c != "scheduling_chip_s"
        )
        assert allocated == row["all_allocated_chip_s"], key
        assert allocated + row["scheduling_chip_s"] == row["wanted_chip_s"], key


def _event(type_: str, minute: float, **fields: object) -> str:
    return json.dumps({"type": type_, "ts": _at(minute), "job_id": "late-save", **fields})


def _span(attempt: int, kind: str, start: float, end: float, step: int | None = None) -> str:
    span = {"job_id": "late-save", "attempt": attempt, "kind": kind}
    span.update(start=_at(start), end=_at(end), step=step)
    return json.dumps(span)


def _at(minute: float) -> str:
    return f"2026-11-24T00:{int(minute):02d}:{round(minute % 1 * 60):02d}Z"


# A failed 4-chip training job, minute by minute (rules the spec's examples leave unexercised):
#   0-8   task 0 holds 4 chips; the schedule at 8 *replaces* them with 2 (not 6), so 8-9 is
#         scheduling until task 1 brings 2 more at 9; the evict at 5 is of a task holding none.
#   0-4   attempt 0 steps 1-2, lost: its save of step 2 (4-6) ends after attempt 1 starts (5).
#   5-6   attempt 1 init, under attempt 0's save: counts as checkpoint_save.
#   6-7   attempt 1 step 1, kept by its save (7-7.5) that ends before JOB_END.
#   7.5-9 data_wait, of which 8-9 is scheduling; 9-9 1/3 runtime idle; 9 1/3-10 step 2, lost.
LATE_SAVE = {
    "scheduler": [
        _event(
            "JOB_SUBMIT",
            0,
            chips_requested=4,
            chip_generation="tpu-v4",
            workload_class="training",
            framework="jax",
        ),
        _event("TASK_SCHEDULE", 0, task_index=0, chips=4),
        _event("TASK_EVICT", 5, task_index=2),
        _event("TASK_SCHEDULE", 8, task_index=0, chips=2),
        _event("TASK_SCHEDULE", 9, task_index=1, chips=2),
        _event("JOB_END", 10, state="FAILED"),
    ],
    "runtime": [
        _span(0, "step", 0, 2, 1),
        _span(0, "step", 2, 4, 2),
        _span(0, "checkpoint_save", 4, 6, 2),
        _span(1, "init", 5, 6),
        _span(1, "step", 6, 7, 1),
        _span(1, "checkpoint_save", 7, 7.5, 1),
        _span(1, "data_wait", 7.5, 8.5),
        _span(1, "step", 9 + 1 / 3, 10, 2),
    ],
}
LATE_SAVE_SECONDS = {  # per chip; the query multiplies by 4
    "wanted_chip_s": 600,
    "all_allocated_chip_s": 540,
    "productive_chip_s": 60,
    "lost_progress_chip_s": 240 + 40,
    "checkpoint_save_chip_s": 120 + 30,
    "checkpoint_restore_chip_s": 0,
    "compile_chip_s": 0,
    "init_chip_s": 0,
    "data_wait_chip_s": 30,
    "runtime_idle_chip_s": 20,
    "scheduling_chip_s": 60,
}


def test_named_timeline_late_save(tmp_path: Path) -> None:
    got = run_query(write_trace_root(LATE_SAVE, tmp_path))
    assert list(got) == [("2026-11-24", "late-save")]
    row = got[("2026-11-24", "late-save")]
    assert row == {column: 4.0 * seconds for column, seconds in LATE_SAVE_SECONDS.items()}
