"""`mpg explain` through the real CLI, on the spec's worked examples and one named timeline.

Every expected attempt, lost step range and line range below is derived by hand from the
fixture's JSONL (line numbers are 1-based, as in the files) and its README.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mpg.explain.model import Attempt
from tests.support.cli import run_mpg
from tests.support.files import SPEC_EXAMPLES, read_expected

# A training job whose id and span file name are rich markup, on 2026-11-20, 2 chips held from
# submit to end. Attempt 0 saves step 1 in time; its save of step 3 ends at 10:34, after
# attempt 1's first span began at 10:32, so steps 2-3 are lost. Attempt 1 is the last of a FAILED
# job, but its save of step 2 ends at 10:58, before JOB_END at 11:00: step 2 is kept.
MARKUP_JOB = "[bold red]x[/]<script>"
MARKUP_SPANS = "runtime/[red]spans[/].jsonl"
_T = "2026-11-20T{}:00Z"


def _span(attempt: int, kind: str, start: str, end: str, step: int | None = None) -> dict:
    span = {"job_id": MARKUP_JOB, "attempt": attempt, "kind": kind}
    span |= {"start": _T.format(start), "end": _T.format(end)}
    return span if step is None else {**span, "step": step}


MARKUP_TRACES = {
    "scheduler/events.jsonl": [
        {"type": "JOB_SUBMIT", "ts": _T.format("10:00"), "job_id": MARKUP_JOB,
         "chips_requested": 2, "chip_generation": "tpu-v4", "workload_class": "training",
         "framework": "jax"},
        {"type": "TASK_SCHEDULE", "ts": _T.format("10:00"), "job_id": MARKUP_JOB,
         "task_index": 0, "chips": 2},
        {"type": "JOB_END", "ts": _T.format("11:00"), "job_id": MARKUP_JOB, "state": "FAILED"},
    ],
    MARKUP_SPANS: [
        _span(0, "step", "10:00", "10:10", step=1),
        _span(0, "checkpoint_save", "10:10", "10:12", step=1),
        _span(0, "step", "10:12", "10:20", step=2),
        _span(0, "step", "10:20", "10:30", step=3),
        _span(0, "checkpoint_save", "10:30", "10:34", step=3),
        _span(1, "init", "10:32", "10:40"),
        _span(1, "checkpoint_restore", "10:40", "10:45", step=1),
        _span(1, "step", "10:45", "10:55", step=2),
        _span(1, "checkpoint_save", "10:55", "10:58", step=2),
    ],
}  # fmt: skip


def _write_markup_traces(root: Path) -> None:
    for name, records in MARKUP_TRACES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture(scope="session")
def outs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`mpg run` once per example (tiny, edges, markup): the output folder of each."""
    markup = tmp_path_factory.mktemp("markup-traces")
    _write_markup_traces(markup)
    traces = {"tiny": SPEC_EXAMPLES / "tiny", "edges": SPEC_EXAMPLES / "edges", "markup": markup}
    found = {}
    for name, root in traces.items():
        out = tmp_path_factory.mktemp(f"{name}-out")
        result = run_mpg("run", "--traces", root, "--out", out)
        assert result.returncode == 0, result.stderr
        found[name] = out
    return found


@pytest.fixture(scope="session")
def explain(outs: dict[str, Path]) -> Callable[..., dict[str, Any]]:
    """`mpg explain --json` on an example, each distinct call run once."""

    @cache
    def run(example: str, job: str, *extra: str) -> dict[str, Any]:
        result = run_mpg("explain", "--out", outs[example], "--job", job, "--json", *extra)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    return run


def _terminal(out: Path, *args: str, columns: int = 120) -> list[str]:
    result = run_mpg("explain", "--out", out, *args, env={"COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def _figures(explained: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in explained["waterfall"]}


def _twelve_digits(value: float | None) -> str | None:
    """A ratio as the expected CSVs write it: 12 significant digits, trailing zeros dropped."""
    return None if value is None else f"{value:.12g}"


@pytest.mark.parametrize(
    ("example", "jobs"), [("tiny", ("train-a", "serve-b")), ("edges", ("train-c", "batch-d"))]
)
def test_per_day_figures_are_the_expected_rows(
    explain: Callable[..., dict[str, Any]], example: str, jobs: tuple[str, ...]
) -> None:
    expected = SPEC_EXAMPLES / example / "expected"
    goodput = {(r["day"], r["job_id"]): r for r in read_expected(expected / "job_day_goodput.csv")}
    ledger: dict[tuple, dict[str, float]] = {}
    for r in read_expected(expected / "chip_time_ledger.csv"):
        ledger.setdefault((r["day"], r["job_id"]), {})[r["category"]] = float(r["chip_s"])
    seen = set()
    for job in jobs:
        for day in explain(example, job)["per_day"]:
            want = goodput[(day["day"], job)]
            seen.add((day["day"], job))
            for column in ("wanted_chip_s", "all_allocated_chip_s", "productive_chip_s"):
                assert day[column] == float(want[column]), (job, day["day"], column)
            want_ideal = want["ideal_chip_s"]
            assert day["ideal_chip_s"] == (None if want_ideal is None else float(want_ideal))
            for ratio in ("sg", "rg", "pg", "mpg"):
                assert _twelve_digits(day[ratio]) == want[ratio], (job, day["day"], ratio)
            assert day["ledger"] == ledger[(day["day"], job)]
    assert seen == set(goodput)


def test_lifetime_waterfall_sums_the_days_and_takes_ratios_of_sums(
    explain: Callable[..., dict[str, Any]],
) -> None:
    # batch-d: 57600 + 9600 wanted; PG only on 2026-11-22, whose productive 52800 has ideal 13200.
    explained = explain("edges", "batch-d")
    figures = {name: f["chip_s"] for name, f in _figures(explained).items()}
    assert figures == {
        "wanted": 67200.0,
        "scheduling": 2400.0,
        "all_allocated": 64800.0,
        "lost_progress": 0.0,
        "checkpoint_save": 0.0,
        "checkpoint_restore": 0.0,
        "compile": 480.0,
        "init": 0.0,
        "data_wait": 1920.0 + 4800.0,
        "runtime_idle": 0.0,
        "productive": 57600.0,
        "program_loss": 39600.0,
        "productive_unprofiled": 4800.0,
        "ideal": 13200.0,
    }
    assert [f["is_total"] for f in explained["waterfall"]] == [
        True, False, True, False, False, False, False, False, False, False, True, False, False,
        True,
    ]  # fmt: skip
    sg, rg, pg = 64800 / 67200, 57600 / 64800, 13200 / 52800
    assert explained["ratios"] == {
        "sg": sg,
        "rg": rg,
        "pg": pg,
        "pg_coverage": 52800 / 57600,
        "mpg": sg * rg * pg,
    }


def test_header_of_an_open_job_names_the_record_that_ends_the_data(
    explain: Callable[..., dict[str, Any]],
) -> None:
    # No JOB_END: wanted time runs to the latest span end, line 25 (00:20 on 2026-11-23).
    assert explain("edges", "batch-d")["job"] == {
        "job_id": "batch-d",
        "workload_class": "bulk_inference",
        "framework": "jax",
        "chip_generation": "tpu-v6e",
        "chips_requested": 8,
        "submitted": "2026-11-22T22:00:00Z",
        "ended": None,
        "end_state": None,
        "data_end": {"instant": "2026-11-23T00:20:00Z", "file": "runtime/spans.jsonl", "line": 25},
    }


def _attempt(explained: dict[str, Any], number: int) -> dict[str, Any]:
    (found,) = [a for a in explained["attempts"] if a["attempt"] == number]
    return found


def test_failed_job_attempts_lost_steps_and_missed_checkpoints(
    explain: Callable[..., dict[str, Any]],
) -> None:
    # edges train-c. Attempt 0 (lines 1-8) runs steps 1-6 and ends at 10:02:10, where attempt 1's
    # restore (line 9) starts. Its save of step 3 (line 5) ended 10:01:40, in time: steps 4-6
    # (lines 6-8, 10:01:10-10:02:10) are lost. They are all-allocated but for the eviction
    # 10:02:00-10:02:05: 55 s x 4 chips = 220 chip-s. Attempt 1 (lines 9-11) is the last of a
    # FAILED job and saves nothing: steps 4-5 (10:02:20-10:03:00) are lost, 40 s x 4 = 160.
    explained = explain("edges", "train-c")
    assert [a["attempt"] for a in explained["attempts"]] == [0, 1]
    assert _attempt(explained, 0) == {
        "attempt": 0,
        "start": "2026-11-22T10:00:00Z",
        "end": "2026-11-22T10:02:10Z",
        "ended_by": "next attempt started",
        "steps": [1, 6],
        "durable": {"step": 3, "ended": "2026-11-22T10:01:40Z"},
        "late_save": None,
        "keeps_every_step": None,
        "lost_steps": [[4, 6]],
        "lost_chip_s": 220.0,
        "lost_records": [{"file": "runtime/spans.jsonl", "ranges": [[6, 8]]}],
        "missed_checkpoint": "steps 4-6 lost: last durable checkpoint step 3 at 10:01:40; "
        "no later checkpoint_save in this attempt",
    }
    assert _attempt(explained, 1) == {
        "attempt": 1,
        "start": "2026-11-22T10:02:10Z",
        "end": "2026-11-22T10:03:30Z",
        "ended_by": "JOB_END (FAILED)",
        "steps": [4, 5],
        "durable": None,
        "late_save": None,
        "keeps_every_step": None,
        "lost_steps": [[4, 5]],
        "lost_chip_s": 160.0,
        "lost_records": [{"file": "runtime/spans.jsonl", "ranges": [[10, 11]]}],
        "missed_checkpoint": "steps 4-5 lost: no checkpoint saved in this attempt",
    }
    assert _figures(explained)["lost_progress"]["chip_s"] == 220.0 + 160.0


def test_restarted_job_that_finished_keeps_its_last_attempt(
    explain: Callable[..., dict[str, Any]],
) -> None:
    # tiny train-a. Attempt 0 (lines 1-11) ends at 00:40, where attempt 1's init (line 12)
    # starts; its save of step 5 (line 8) ended 00:23:30, so steps 6-8 (lines 9-11,
    # 00:23:30-00:26:30, all 8 chips held until the eviction at 00:27) are lost: 180 s x 8.
    # Attempt 1 is the last and the job FINISHED at 00:47:30: every step is kept.
    explained = explain("tiny", "train-a")
    first, last = _attempt(explained, 0), _attempt(explained, 1)
    assert (first["end"], first["ended_by"], first["steps"]) == (
        "2026-11-20T00:40:00Z",
        "next attempt started",
        [1, 8],
    )
    assert (first["lost_steps"], first["lost_chip_s"]) == ([[6, 8]], 1440.0)
    assert first["missed_checkpoint"] == (
        "steps 6-8 lost: last durable checkpoint step 5 at 00:23:30; "
        "no later checkpoint_save in this attempt"
    )
    assert (last["start"], last["end"], last["ended_by"], last["steps"]) == (
        "2026-11-20T00:40:00Z",
        "2026-11-20T00:47:30Z",
        "JOB_END (FINISHED)",
        [6, 10],
    )
    assert last["durable"] == {"step": 10, "ended": "2026-11-20T00:47:20Z"}
    assert last["keeps_every_step"] == "last attempt of a FINISHED job: every step is kept"
    assert (last["lost_steps"], last["lost_chip_s"], last["missed_checkpoint"]) == ([], 0.0, None)


def test_open_bulk_inference_job_keeps_every_step(explain: Callable[..., dict[str, Any]]) -> None:
    (attempt,) = explain("edges", "batch-d")["attempts"]
    assert (attempt["start"], attempt["end"], attempt["ended_by"], attempt["steps"]) == (
        "2026-11-22T22:05:00Z",
        None,
        "still open",
        [1, 12],
    )
    assert attempt["keeps_every_step"] == "bulk_inference: every step is kept"


def test_a_save_that_ends_after_its_attempt_is_the_missed_checkpoint(
    explain: Callable[..., dict[str, Any]],
) -> None:
    # MARKUP_TRACES: wanted 10:00-11:00 x 2 chips = 7200, all allocated. Kept steps 1 (a0) and
    # 2 (a1): 1200 s; lost steps 2-3 of a0 (10:12-10:30): 1080 s; saves 10:10-10:12,
    # 10:30-10:34 (outranking a1's init from 10:32) and 10:55-10:58: 540 s; init 10:34-10:40:
    # 360 s; restore 300 s; idle 10:58-11:00: 120 s. Chip-seconds are twice these.
    explained = explain("markup", MARKUP_JOB)
    assert explained["per_day"][0]["ledger"] == {
        "productive_unprofiled": 2400.0,
        "lost_progress": 2160.0,
        "checkpoint_save": 1080.0,
        "checkpoint_restore": 600.0,
        "init": 720.0,
        "runtime_idle": 240.0,
    }
    first, last = _attempt(explained, 0), _attempt(explained, 1)
    assert (first["durable"], first["late_save"]) == (
        {"step": 1, "ended": "2026-11-20T10:12:00Z"},
        {"step": 3, "ended": "2026-11-20T10:34:00Z"},
    )
    assert (first["lost_steps"], first["lost_chip_s"]) == ([[2, 3]], 2160.0)
    assert first["missed_checkpoint"] == (
        "steps 2-3 lost: last durable checkpoint step 1 at 10:12:00; a checkpoint_save for "
        "step 3 ended at 10:34:00, after the attempt ended at 10:32:00"
    )
    assert (last["durable"], last["lost_steps"], last["keeps_every_step"]) == (
        {"step": 2, "ended": "2026-11-20T10:58:00Z"},
        [],
        None,
    )
    assert _figures(explained)["checkpoint_save"]["records"] == [
        {"file": MARKUP_SPANS, "ranges": [[2, 2], [5, 5], [9, 9]]}
    ]


def test_provenance_names_the_lines_behind_each_figure(
    explain: Callable[..., dict[str, Any]],
) -> None:
    tiny = _figures(explain("tiny", "train-a"))
    # train-a's scheduler lines are 1-8; its two profile records are lines 1-2.
    assert tiny["scheduling"]["records"] == [{"file": "scheduler/events.jsonl", "ranges": [[1, 8]]}]
    assert tiny["ideal"]["records"] == [{"file": "profiles/profiles.jsonl", "ranges": [[1, 2]]}]
    # Kept steps: attempt 0's steps 1-5 (lines 3-7) and all of attempt 1's (lines 16-20).
    assert tiny["productive"]["records"] == [
        {"file": "runtime/spans.jsonl", "ranges": [[3, 7], [16, 20]]}
    ]
    edges = _figures(explain("edges", "train-c"))
    assert edges["lost_progress"]["records"] == [
        {"file": "runtime/spans.jsonl", "ranges": [[6, 8], [10, 11]]}
    ]
    # The save of step 3 (line 5) lies under steps 4-5: nothing is charged to it, no line shown.
    assert (edges["checkpoint_save"]["chip_s"], edges["checkpoint_save"]["records"]) == (0.0, [])


def test_one_day_shows_that_day_and_the_task_events_carried_into_it(
    explain: Callable[..., dict[str, Any]],
) -> None:
    # batch-d on 2026-11-23: task 0 holds its chips since line 7 (22:00); task 1's last instant
    # before midnight, 23:00, has its schedule and eviction (lines 9, 10); line 8 is superseded.
    explained = explain("edges", "batch-d", "--day", "2026-11-23")
    figures = _figures(explained)
    assert (explained["day"], [d["day"] for d in explained["per_day"]]) == (
        "2026-11-23",
        ["2026-11-23"],
    )
    assert explained["days"] == ["2026-11-22", "2026-11-23"]
    assert figures["all_allocated"]["records"] == [
        {"file": "scheduler/events.jsonl", "ranges": [[6, 7], [9, 10]]}
    ]
    assert figures["wanted"]["records"] == [
        {"file": "runtime/spans.jsonl", "ranges": [[25, 25]]},
        {"file": "scheduler/events.jsonl", "ranges": [[6, 6]]},
    ]
    assert figures["data_wait"]["records"] == [
        {"file": "runtime/spans.jsonl", "ranges": [[24, 24]]}
    ]
    assert [(f["name"], f["chip_s"]) for f in explained["waterfall"] if f["is_total"]] == [
        ("wanted", 9600.0),
        ("all_allocated", 9600.0),
        ("productive", 4800.0),
        ("productive_unprofiled", 4800.0),
    ]
    assert explained["matches_published"] is True


def test_terminal_shows_the_waterfall_attempts_and_lines(outs: dict[str, Path]) -> None:
    lines = _terminal(outs["edges"], "--job", "train-c")
    rows = {tuple(line.split()[:2]): line.split() for line in lines if line[:3] in (" = ", " - ")}
    # chip-hours = chip-s / 3600; shares of 840 wanted chip-s.
    assert [(r[2], r[3]) for r in rows.values()] == [
        ("0.233", "100.0%"),
        ("0.006", "2.4%"),
        ("0.228", "97.6%"),
        ("0.106", "45.2%"),
        ("0.000", "0.0%"),
        ("0.011", "4.8%"),
        ("0.000", "0.0%"),
        ("0.011", "4.8%"),
        ("0.000", "0.0%"),
        ("0.033", "14.3%"),
        ("0.067", "28.6%"),
        ("0.067", "28.6%"),
    ]
    assert list(rows)[:3] == [("=", "wanted"), ("-", "scheduling"), ("=", "all_allocated")]
    assert rows[("=", "all_allocated")][-2:] == ["SG", "0.976"]
    assert rows[("=", "productive")][-2:] == ["RG", "0.293"]
    assert rows[("=", "productive_unprofiled")][-2:] == ["PG", "-"]
    assert "MPG = SG x RG x PG = -" in lines
    assert (
        "attempt 0: steps 4-6 lost: last durable checkpoint step 3 at 10:01:40; no later "
        "checkpoint_save in this attempt" in lines
    )
    assert "  runtime/spans.jsonl: lines 6-8" in lines
    assert any(line.split() == ["lost_progress", "runtime/spans.jsonl:", "lines", "6-8,", "10-11"]
               for line in lines)  # fmt: skip
    assert lines[-1] == (
        "recomputed from the job's 16 records in the record store: matches published ledger"
    )


def test_an_80_column_terminal_cuts_no_day_or_ratio_short(outs: dict[str, Path]) -> None:
    """Rich shrinks a table to the terminal by cutting cells ("2026-11-...", "0.9..."); the
    tables are printed at their natural width instead, and the terminal wraps."""
    lines = _terminal(outs["edges"], "--job", "batch-d", columns=80)
    assert not [line for line in lines if "…" in line]
    rows = [line.split() for line in lines]
    days = {r[0]: r[1:] for r in rows if len(r) == 9 and r[0].startswith("2026-") and "." in r[1]}
    # chip-hours and ratios of expected/job_day_goodput.csv (57600 chip-s = 16 chip-hours)
    assert days == {
        "2026-11-22": ["16.000", "15.333", "14.667", "3.667", "0.958", "0.957", "0.250", "0.229"],
        "2026-11-23": ["2.667", "2.667", "1.333", "-", "1.000", "0.500", "-", "-"],
    }


@pytest.mark.parametrize(
    ("lost", "sentence"),
    [
        (((341, 341),), "step 341 lost: no checkpoint saved in this attempt"),
        (((341, 342),), "steps 341-342 lost: no checkpoint saved in this attempt"),
        (((3, 3), (5, 5)), "steps 3, 5 lost: no checkpoint saved in this attempt"),
    ],
)
def test_one_lost_step_is_a_step(lost: tuple[tuple[int, int], ...], sentence: str) -> None:
    start = dt.datetime(2026, 11, 20, 10, tzinfo=dt.UTC)
    attempt = Attempt(
        attempt=0, start=start, end=None, ended_by="-", steps=(1, 342), durable=None,
        late_save=None, keeps_every_step=None, lost_steps=lost, lost_chip_s=0.0, lost_records=(),
    )  # fmt: skip
    assert attempt.missed_checkpoint == sentence


def test_markup_in_job_ids_and_file_names_prints_literally(outs: dict[str, Path]) -> None:
    lines = _terminal(outs["markup"], "--job", MARKUP_JOB)
    assert lines[0] == f"job {MARKUP_JOB}"
    assert f"  {MARKUP_SPANS}: lines 3-4" in lines


def _error(*args: str | Path) -> str:
    result = run_mpg("explain", *args)
    assert result.returncode == 2, result.stdout
    (line,) = result.stderr.splitlines()
    return line


def test_user_errors_are_one_line_and_exit_2(outs: dict[str, Path], tmp_path: Path) -> None:
    edges = outs["edges"]
    assert _error("--out", tmp_path, "--job", "train-c") == (
        f"mpg: error: no published tables in {tmp_path}: run mpg run first"
    )
    assert _error("--out", edges, "--job", "nope") == (
        f"mpg: error: job 'nope' has no rows in {edges / 'mpg.duckdb'} (metric version v1)"
    )
    assert _error("--out", edges, "--job", "train-c", "--day", "2026-11-23") == (
        "mpg: error: job 'train-c' has no row on 2026-11-23 (its days: 2026-11-22)"
    )
    assert _error("--out", edges, "--job", "train-c", "--metric-version", "v9") == (
        "mpg: error: unknown metric version v9 (known: v1, v2)"
    )


def test_a_corrupt_store_file_is_named(outs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(outs["edges"], out, symlinks=True)
    (damaged,) = sorted((out / "records" / "runtime").glob("*.parquet"))[:1]
    damaged.write_bytes(damaged.read_bytes()[:100])
    line = _error("--out", out, "--job", "train-c")
    assert line == (
        f"mpg: error: cannot read Parquet file {damaged}: Parquet magic bytes not found in "
        "footer. Either the file is corrupted or this is not a parquet file."
    )


def test_a_published_ledger_the_store_does_not_give_is_a_warning(
    outs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(outs["edges"], out, symlinks=True)
    with duckdb.connect(str(out / "mpg.duckdb")) as con:
        con.execute(
            "update chip_time_ledger set chip_s = 400 "
            "where job_id = 'train-c' and category = 'lost_progress'"
        )
    result = run_mpg("explain", "--out", out, "--job", "train-c", env={"COLUMNS": "120"})
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "WARNING: the record store does not give the published ledger:",
        "  2026-11-22 lost_progress: published 400.0 chip-s, recomputed 380.0 chip-s",
    ]


def test_the_jobs_checkpoint_advice_and_step_times(
    explain: Callable[..., dict[str, Any]], outs: dict[str, Path]
) -> None:
    """The markup job, by hand: 2 chips held 10:00-11:00 (3,600 all-allocated seconds), one
    interruption (attempt 0 ends where attempt 1 begins), so 1 an hour and 3,600 s between them;
    one restart, from attempt 1's first span (init, 10:32) to its first step (10:45): 780 s.
    Intervals between blocking saves: 10:00-10:10 and 10:12-10:30 in attempt 0, 10:45-10:55 in
    attempt 1: (600 + 1,080 + 600) / 3 = 760 s. Kept steps on 2026-11-20: step 1 (10:00-10:10)
    and attempt 1's step 2 (10:45-10:55), 600 s each: median and max 600 s, no slow step. The
    rest of the advice is the published row, unchanged."""
    explained = explain("markup", MARKUP_JOB)
    advice = explained["checkpoint_advice"]
    assert {k: advice[k] for k in ("interruptions", "interruptions_per_hour", "mtbi_s",
                                   "restarts", "mean_restart_s", "observed_interval_s")} == {
        "interruptions": 1, "interruptions_per_hour": 1.0, "mtbi_s": 3600.0, "restarts": 1,
        "mean_restart_s": 780.0, "observed_interval_s": pytest.approx(760.0),
    }  # fmt: skip
    with duckdb.connect(str(outs["markup"] / "mpg.duckdb"), read_only=True) as con:
        (row,) = con.sql("from checkpoint_advice").to_arrow_table().to_pylist()
    saved = advice.pop("usd_saved")  # the layer's (mpg_advice): at tpu-v4's $3.22 a chip-hour
    assert advice == {k: row[k] for k in advice}
    assert saved == row["chip_hours_saved"] * 3.22
    (day,) = explained["step_times"]
    assert {k: day[k] for k in ("day", "steps", "median_step_s", "max_step_s", "slow_step_chip_s",
                                "slow_step_share", "ranks", "straggler_rank")} == {
        "day": "2026-11-20", "steps": 2, "median_step_s": 600.0, "max_step_s": 600.0,
        "slow_step_chip_s": 0.0, "slow_step_share": 0.0, "ranks": 0, "straggler_rank": None,
    }  # fmt: skip
    lines = "\n".join(_terminal(outs["markup"], "--job", MARKUP_JOB))
    assert "Checkpoint advice (the job's whole life)" in lines
    assert "interval between saves, min" in lines and "12.7" in lines  # 760 s
    assert " 2026-11-20       2     600.00 " in lines


def test_step_times_follow_the_day_shown(explain: Callable[..., dict[str, Any]]) -> None:
    """tiny's serve-b has step times on both its days; --day keeps that day's."""
    both = explain("tiny", "serve-b")["step_times"]
    one = explain("tiny", "serve-b", "--day", "2026-11-21")["step_times"]
    assert [d["day"] for d in both] == ["2026-11-20", "2026-11-21"]
    assert one == [both[1]]
    assert explain("tiny", "serve-b")["checkpoint_advice"] is None  # serving: no advice
