"""`mpg import slurm`: real `sacct --parsable2` output of Slurm 22.05 (tests/fixtures/adapters/
slurm, README there), its quarantine, and SG / RG per job-day after `mpg run`, checked against an
independent calculation over the sacct rows.

The independent route is plain Python over the rows as sacct printed them: job steps left out,
a row of pending array tasks (`32_[1-3]`) standing for each task, a job's rows (its incarnations,
from `--duplicates`) in Submit order. Wanted time runs from the job's earliest Eligible (or
allocation) to its last row's End, or to the end of the data while the job is still running,
pending or requeued; all-allocated time is each allocated row's Start to End (or the end of the
data) where it holds the GPUs the job asked for; productive time is the last allocated row's, when
the job completed or has not ended. Chip-seconds are seconds x the GPUs of ReqTRES.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mpg.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "adapters" / "slurm"
FINAL = FIXTURES / "sacct.txt"
MIDWAY = FIXTURES / "sacct-midway.txt"
STEPS = FIXTURES / "sacct-steps.txt"
GPU_TYPES = ("--gpu-type", "a100=gpu-a100", "--gpu-type", "H100=gpu-h100")
# Slurm states after which a job is gone (the others: it runs, waits, or was requeued).
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"}
HEADER = "JobID|JobIDRaw|Partition|User|Submit|Eligible|Start|End|State|ReqTRES|AllocTRES|NodeList"


def import_(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["import", "slurm", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lines(root: Path, source: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for f in sorted((root / source).glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]


def timeline(root: Path, job_id: str) -> list[tuple[Any, ...]]:
    """A job's events in time order (releases before schedules at one instant, JOB_END last):
    type, time of day, and the field that says most (chips, state)."""
    rank = {"JOB_SUBMIT": 0, "TASK_EVICT": 1, "TASK_FAIL": 1, "TASK_LOST": 1, "TASK_FINISH": 1}
    events = [e for e in lines(root, "scheduler") if e["job_id"] == job_id]
    events.sort(key=lambda e: (e["ts"], rank.get(e["type"], 2 if e["type"] != "JOB_END" else 3)))
    return [
        (e["type"], e["ts"][11:19], e.get("chips", e.get("chips_requested", e.get("state"))))
        for e in events
    ]


def spans(root: Path, job_id: str) -> list[tuple[int, str, str]]:
    found = [s for s in lines(root, "runtime") if s["job_id"] == job_id]
    assert all(s["kind"] == "step" for s in found)
    return sorted((s["attempt"], s["start"][11:19], s["end"][11:19]) for s in found)


@pytest.fixture(scope="module")
def final_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """sacct.txt imported alone: the root, stdout and stderr."""
    root = tmp_path_factory.mktemp("slurm") / "traces"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["import", "slurm", str(FINAL), "--out", str(root), *GPU_TYPES]) == 0
    return root, out.getvalue(), err.getvalue()


def test_named_timelines(final_root: tuple[Path, str, str]) -> None:
    """Jobs of the fixture's workload, each event and span read off its sacct rows by hand."""
    root, _, _ = final_root
    # Preempted at 21:01:01 by job 9; requeued (Submit 21:01:01), eligible 11 s later.
    assert timeline(root, "3") == [
        ("JOB_SUBMIT", "21:00:56", 2),
        ("TASK_SCHEDULE", "21:00:56", 2),
        ("TASK_EVICT", "21:01:01", None),
        ("TASK_SCHEDULE", "21:01:12", 2),
        ("TASK_FINISH", "21:01:27", None),
        ("JOB_END", "21:01:27", "FINISHED"),
    ]
    assert spans(root, "3") == [(0, "21:00:56", "21:01:01"), (1, "21:01:12", "21:01:27")]
    # `scontrol requeue`: REQUEUED, then completed.
    assert timeline(root, "10") == [
        ("JOB_SUBMIT", "21:01:06", 1),
        ("TASK_SCHEDULE", "21:01:12", 1),
        ("TASK_EVICT", "21:01:15", None),
        ("TASK_SCHEDULE", "21:01:26", 1),
        ("TASK_FINISH", "21:01:38", None),
        ("JOB_END", "21:01:38", "FINISHED"),
    ]
    # The node failed under both; 26 was requeued, 27 (--no-requeue) ended there.
    assert timeline(root, "26") == [
        ("JOB_SUBMIT", "21:02:41", 2),
        ("TASK_SCHEDULE", "21:02:41", 2),
        ("TASK_LOST", "21:02:45", None),
        ("TASK_SCHEDULE", "21:03:55", 2),
        ("TASK_FINISH", "21:04:10", None),
        ("JOB_END", "21:04:10", "FINISHED"),
    ]
    assert timeline(root, "27") == [
        ("JOB_SUBMIT", "21:02:41", 1),
        ("TASK_SCHEDULE", "21:02:41", 1),
        ("TASK_LOST", "21:02:45", None),
        ("JOB_END", "21:02:45", "FAILED"),
    ]
    assert timeline(root, "4") == [
        ("JOB_SUBMIT", "21:00:56", 1),
        ("TASK_SCHEDULE", "21:00:56", 1),
        ("TASK_FAIL", "21:02:25", None),
        ("JOB_END", "21:02:25", "FAILED"),
    ]
    # Cancelled while pending (Start `None`, no AllocTRES): wanted, never allocated.
    assert timeline(root, "16") == [
        ("JOB_SUBMIT", "21:01:12", 4),
        ("JOB_END", "21:01:15", "CANCELLED"),
    ]
    assert spans(root, "16") == []
    # Submitted held at 21:01:15, released at 21:01:21: it wants GPUs from its eligibility.
    assert timeline(root, "17")[0] == ("JOB_SUBMIT", "21:01:21", 1)
    assert timeline(root, "18")[0] == ("JOB_SUBMIT", "21:01:25", 1)  # its dependency done
    # Still running when sacct ran: no release, its span ends at the input's latest time.
    assert timeline(root, "28") == [("JOB_SUBMIT", "21:04:11", 4), ("TASK_SCHEDULE", "21:04:11", 4)]
    assert spans(root, "28") == [(0, "21:04:11", "21:04:12")]
    # Pending: the array row 32_[1-3] is three jobs; 30+1 is a heterogeneous job's GPU component.
    for job in ("29", "30+1", "32_1", "32_2", "32_3"):
        assert timeline(root, job) == [("JOB_SUBMIT", "21:04:12", 1)]


def test_jobs_gpus_and_quarantine(final_root: tuple[Path, str, str]) -> None:
    root, summary, err = final_root
    assert summary.splitlines()[0] == (
        "mpg import slurm: 35 records read = 33 converted + 2 quarantined"
    )
    submits = {e["job_id"]: e for e in lines(root, "scheduler") if e["type"] == "JOB_SUBMIT"}
    assert sorted(submits) == sorted(
        [str(j) for j in (1, 3, 4, 5, 9, 10, 11, 16, 17, 18, 20, 21, 22, 23)]
        + [str(j) for j in range(24, 30)]
        + ["30+1"]
        + [f"2_{t}" for t in range(8)]
        + [f"32_{t}" for t in (1, 2, 3)]
    )
    generations = {j: e["chip_generation"] for j, e in submits.items()}
    # Asked for untyped GPUs and given a100s; both types at once; --gpus=h100:1.
    assert (generations["20"], generations["22"], generations["21"]) == (
        "gpu-a100",
        "gpu-unknown",
        "gpu-h100",
    )
    assert {e["workload_class"] for e in submits.values()} == {"training"}
    assert {(e["framework"], e["owner"]) for e in submits.values()} == {("other", "root")}
    quarantined = [json.loads(line) for f in (root / "quarantine").glob("*") for line in f.open()]
    assert sorted((q["line"], q["reason"], q["raw"].split("|")[0]) for q in quarantined) == [
        (22, "no GPU: no gres/gpu in ReqTRES or AllocTRES", "19"),
        (34, "no GPU: no gres/gpu in ReqTRES or AllocTRES", "30+0"),
    ]
    assert err == ""


def test_files_read_together_merge_incarnations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], final_root: tuple[Path, str, str]
) -> None:
    """The mid-way output (job 4 running, array tasks 2_[3-7%4] pending) read with the final
    one gives the final one's records, all in its batch; the steps' output gives them too. A
    root that held the mid-way import alone loses its records on re-import: stale, not kept."""
    root, _, _ = final_root
    expected = {s: sorted(map(json.dumps, lines(root, s))) for s in ("scheduler", "runtime")}
    both = tmp_path / "both"
    assert import_(capsys, MIDWAY, "--out", both, *GPU_TYPES)[0] == 0
    assert {e["job_id"] for e in lines(both, "scheduler")} == {
        *(str(j) for j in (1, 3, 4, 5, 9)),
        *(f"2_{t}" for t in range(8)),
    }
    code, out, _ = import_(capsys, MIDWAY, FINAL, "--out", both, *GPU_TYPES)
    assert (code, out.splitlines()[0]) == (
        0,
        "mpg import slurm: 44 records read = 42 converted + 2 quarantined",
    )
    assert [len(list((both / s).glob("*"))) for s in ("scheduler", "runtime")] == [1, 1]
    code, _, err = import_(capsys, STEPS, "--out", tmp_path / "steps", *GPU_TYPES)
    assert "32 job step rows (.batch, .extern, .N) are parts of their jobs" in err
    for got in (both, tmp_path / "steps"):
        assert {s: sorted(map(json.dumps, lines(got, s))) for s in expected} == expected


# --- The independent calculation ------------------------------------------------------------


def utc(text: str) -> datetime | None:
    if text in ("Unknown", "None", ""):
        return None
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def gpus(tres: str) -> int:
    found = re.search(r"(?:^|,)gres/gpu=(\d+)", tres)
    return int(found.group(1)) if found else 0


def by_day(start: datetime, end: datetime, chips: int) -> dict[date, float]:
    """Chip-seconds of [start, end) per UTC day."""
    out: dict[date, float] = defaultdict(float)
    while start < end:
        midnight = datetime.combine(start.date() + timedelta(days=1), time(), tzinfo=UTC)
        cut = min(end, midnight)
        out[start.date()] += (cut - start).total_seconds() * chips
        start = cut
    return out


def sacct_jobs(path: Path) -> dict[str, list[dict[str, str]]]:
    """The rows of each job (steps left out, pending array tasks spread), in Submit order."""
    text = path.read_text().splitlines()
    header = text[0].split("|")
    rows = [dict(zip(header, line.split("|"), strict=True)) for line in text[1:]]
    jobs: dict[str, list[dict[str, str]]] = defaultdict(list)
    listed = []
    for row in rows:
        if "." in row["JobID"]:
            continue
        pending = re.fullmatch(r"(\d+)_\[([\d,-]+)(%\d+)?\]", row["JobID"])
        if pending is None:
            jobs[row["JobID"]].append(row)
            continue
        for piece in pending.group(2).split(","):
            first, _, last = piece.partition("-")
            for task in range(int(first), int(last or first) + 1):
                listed.append((f"{pending.group(1)}_{task}", row))
    own = set(jobs)  # a task with rows of its own: the pending list is stale for it
    for job, row in listed:
        if job not in own:
            jobs[job].append(row)
    return {j: sorted(r, key=lambda row: row["Submit"]) for j, r in jobs.items()}


def expected_job_days(path: Path) -> dict[tuple[str, date], tuple[float, float, float]]:
    jobs = {j: rows for j, rows in sacct_jobs(path).items() if gpus(rows[0]["ReqTRES"])}
    times = [
        t
        for rows in jobs.values()
        for r in rows
        for f in ("Submit", "Eligible", "Start", "End")
        if (t := utc(r[f])) is not None
    ]
    data_end = max(times)
    out = {}
    for job, rows in jobs.items():
        chips = gpus(rows[0]["ReqTRES"])
        ran = [r for r in rows if r["AllocTRES"] and utc(r["Start"])]
        last_state = rows[-1]["State"].split(" ")[0]
        ended = last_state in ENDED
        starts = [utc(r["Eligible"]) for r in rows] + [utc(r["Start"]) for r in ran]
        wanted = by_day(
            min(t for t in starts if t), utc(rows[-1]["End"]) if ended else data_end, chips
        )
        held = [(utc(r["Start"]), utc(r["End"]) or data_end, gpus(r["AllocTRES"])) for r in ran]
        allocated = [by_day(s, e, chips) for s, e, g in held if g >= chips]
        kept = held and (not ended or last_state == "COMPLETED") and held[-1][2] >= chips
        productive = by_day(held[-1][0], held[-1][1], chips) if kept else {}
        for day, w in wanted.items():
            out[job, day] = (
                w,
                sum(a.get(day, 0.0) for a in allocated),
                productive.get(day, 0.0),
            )
    return out


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures' folder imported (the final, mid-way and steps outputs, whose rows are
    merged), then `mpg run` over it."""
    tmp = tmp_path_factory.mktemp("slurm-run")
    root, out = tmp / "traces", tmp / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["import", "slurm", str(FIXTURES), "--out", str(root), *GPU_TYPES]) == 0
        assert main(["run", "--traces", str(root), "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_goodput_per_job_day_matches_an_independent_calculation(published: Path) -> None:
    with duckdb.connect(str(published / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, day, wanted_chip_s, all_allocated_chip_s, productive_chip_s, sg, rg, "
            "pg from job_day_goodput where metric_version = 'v1'"
        ).fetchall()
        counts = "select source = 'import', count(*) from quarantine group by all"
        imported = (published.parent / "traces" / "quarantine").glob("*.jsonl")
        quarantined = sum(len(f.read_text().splitlines()) for f in imported)
        assert db.sql(counts).fetchall() == ([(True, quarantined)] if quarantined else [])
    expected = expected_job_days(FINAL)
    assert {(r[0], r[1]) for r in rows} == set(expected)
    for job_id, day, wanted, allocated, productive, sg, rg, pg in rows:
        want = expected[job_id, day]
        assert (wanted, allocated, productive) == want, job_id
        assert sg == pytest.approx(want[1] / want[0], rel=1e-12)
        assert rg == (pytest.approx(want[2] / want[1], rel=1e-12) if want[1] else None)
        assert pg is None


@pytest.mark.slow
def test_goodput_of_jobs_by_hand(published: Path) -> None:
    """Job 3 (2 h100) wants 21:00:56-21:01:27 (31 s), holds 5 s before its preemption and 15 s
    after its requeue: SG 20/31, and only the last 15 s are kept: RG 15/20. Job 26 (2 h100)
    wants 21:02:41-21:04:10 (89 s), holds 4 s before the node failed and 15 s after a minute's
    wait: SG 19/89, RG 15/19. Job 16 (4 a100) waited 3 s and was cancelled: SG 0, RG null.
    Job 4 timed out: SG 1 (it ran from its submission), RG 0 (a time-out is a failure)."""
    with duckdb.connect(str(published / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, chips_requested, wanted_chip_s, all_allocated_chip_s, "
            "productive_chip_s, sg, rg from job_day_goodput where metric_version = 'v1' "
            "and job_id in ('3', '26', '16', '4') order by job_id"
        ).fetchall()
    assert rows == [
        ("16", 4, 12.0, 0.0, 0.0, 0.0, None),
        ("26", 2, 178.0, 38.0, 30.0, pytest.approx(19 / 89, rel=1e-12), pytest.approx(15 / 19)),
        ("3", 2, 62.0, 40.0, 30.0, pytest.approx(20 / 31, rel=1e-12), 0.75),
        ("4", 1, 89.0, 89.0, 0.0, 1.0, 0.0),
    ]


# --- Rows written by hand: what the workload could not make, and hostile input ---------------


def at(minute: int) -> str:
    """A sacct time `minute` minutes after 2026-01-01 00:00 (printed in UTC)."""
    return (datetime(2026, 1, 1) + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S")


def row(state: str, job: str, times: tuple[int | str, ...], alloc: str, req: str = "") -> str:
    """A row of the hand-made file's header: State|JobID|Restarts|Submit|Eligible|Start|End|
    AllocTRES|ReqTRES|User (another order than sacct's default, with a field not read)."""
    texts = [at(t) if isinstance(t, int) else t for t in times]
    return "|".join([state, job, "0", *texts, alloc, req or alloc, "alice"])


A100 = "cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=4G,node=1"
H100 = "cpu=1,gres/gpu:h100=4,gres/gpu=4,node=1"
HANDMADE_HEADER = "State|JobID|Restarts|Submit|Eligible|Start|End|AllocTRES|ReqTRES|User"
HANDMADE = [
    HANDMADE_HEADER,
    row("COMPLETED", "100", (0, 0, 10, 60), A100),  # 2
    "COMPLETED|101|0|" + at(0),  # 3: too few fields
    row("COMPLETED", "1x2", (0, 0, 10, 60), A100),  # 4
    row("PENDING", "103_[1-3,5", (0, 0, "Unknown", "Unknown"), "", A100),  # 5: cut short
    row("WEIRD", "104", (0, 0, 10, 60), A100),  # 6
    row("REVOKED", "105", (0, 0, "Unknown", 60), "", A100),  # 7
    row("COMPLETED", "106", ("2026-01-01 00:00:00", 0, 10, 60), A100),  # 8
    row("COMPLETED", "107", ("", 0, 10, 60), A100),  # 9
    row("COMPLETED", "108", (0, 0, 10, 60), "gres/gpu=x", A100),  # 10
    row("COMPLETED", "109", (0, 0, 10, "Unknown"), A100),  # 11
    row("RUNNING", "110", (0, 0, "Unknown", "Unknown"), A100),  # 12
    row("COMPLETED", "111", (0, 0, 10, 5), A100),  # 13
    row("PREEMPTED", "112", (0, 0, 10, 20), A100),  # 14: its job's other row is bad
    row("COMPLETED", "112", (20, 22, "yesterday", 60), A100),  # 15
    row("PREEMPTED", "113", (0, 0, 10, 60), A100),  # 16: incarnations overlap
    row("COMPLETED", "113", (30, 30, 40, 70), A100),  # 17
    row("RUNNING", "114", (0, 0, 10, "Unknown"), A100),  # 18: running, then another
    row("COMPLETED", "114", (30, 30, 40, 70), A100),  # 19
    "   ",  # 20: blank, not a row
    HANDMADE_HEADER,  # 21: a header repeated (files concatenated), not a row
    row("COMPLETED", "115.batch", ("x", "x", "x", "x"), ""),  # 22: a step
    row("OUT_OF_MEMORY", "116", (0, 5, 10, 60), A100),  # 23
    row("COMPLETED", "117+0", (0, 0, 30, 60), H100),  # 24: a het job's GPU component
    row("COMPLETED", "117+1", (0, 0, 30, 60), "cpu=4,node=1"),  # 25: and its CPU one
    row("PREEMPTED", "118", (0, 0, 10, 60), A100),  # 26: preempted and not requeued
    row("REQUEUED", "119", (0, 0, 10, 60), A100),  # 27: requeued, not yet eligible again
    row("CANCELLED by 1000", "120", (0, "Unknown", 5, 5), "", A100),  # 28: never eligible
    row("PENDING", "121_[0-2000000]", (0, 0, "Unknown", "Unknown"), "", A100),  # 29
    row("COMPLETED", "122", (0, 0, 10, 60), "gres/gpu=2", "gres/gpu=2"),  # 30: no GPU type
    row("COMPLETED", "123", (0, 0, 10, 60), "gres/gpu:v100=1,gres/gpu=1"),  # 31: type not given
    row("PENDING", "124_[1-2]", (0, 0, "Unknown", "Unknown"), "", A100),  # 32: stale for 124_1
    row("COMPLETED", "124_1", (0, 0, 10, 60), A100),  # 33
]
HANDMADE_QUARANTINE = {
    3: "malformed line: wrong number of fields",
    4: "bad JobID",
    5: "array task list cut short: run sacct with SLURM_BITSTR_LEN=0",
    6: "unknown state",
    7: "revoked: a federation sibling that ran on another cluster",
    8: "unparseable time: Submit",
    9: "missing field: Submit",
    10: "bad TRES: AllocTRES",
    11: "missing field: End",
    12: "missing field: Start",
    13: "end before start",
    14: "another row of its job is quarantined",
    15: "unparseable time: Start",
    16: "incarnations overlap",
    17: "incarnations overlap",
    18: "incarnation without End followed by another",
    19: "incarnation without End followed by another",
    25: "no GPU: no gres/gpu in ReqTRES or AllocTRES",
    29: "out of range: more than 1000000 pending array tasks",
}


def test_handmade_rows_and_their_quarantine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "sacct-handmade.txt"
    src.write_text("\n".join(HANDMADE) + "\n")
    root = tmp_path / "root"
    code, out, err = import_(capsys, src, "--out", root, *GPU_TYPES)
    assert (code, out.splitlines()[0]) == (
        0,
        "mpg import slurm: 30 records read = 11 converted + 19 quarantined",
    )
    quarantined = [json.loads(line) for f in (root / "quarantine").glob("*") for line in f.open()]
    assert {q["line"]: q["reason"] for q in quarantined} == HANDMADE_QUARANTINE
    assert {q["line"]: q["raw"] for q in quarantined}[3] == HANDMADE[2]
    assert err.splitlines() == [
        "mpg import slurm: 1 job step rows (.batch, .extern, .N) are parts of their jobs: "
        "nothing written for them (sacct --allocations leaves them out)",
        "mpg import slurm: 1 jobs never became eligible (held, or waiting on a dependency or "
        "--begin): nothing written for them",
        "mpg import slurm: written as gpu-unknown (no --gpu-type): v100 (1 jobs), "
        "GPUs of no type (1 jobs)",
    ]
    assert timeline(root, "100") == [
        ("JOB_SUBMIT", "00:00:00", 2),
        ("TASK_SCHEDULE", "00:10:00", 2),
        ("TASK_FINISH", "01:00:00", None),
        ("JOB_END", "01:00:00", "FINISHED"),
    ]
    assert timeline(root, "116") == [
        ("JOB_SUBMIT", "00:05:00", 2),
        ("TASK_SCHEDULE", "00:10:00", 2),
        ("TASK_FAIL", "01:00:00", None),
        ("JOB_END", "01:00:00", "FAILED"),
    ]
    assert timeline(root, "117+0")[1:] == [
        ("TASK_SCHEDULE", "00:30:00", 4),
        ("TASK_FINISH", "01:00:00", None),
        ("JOB_END", "01:00:00", "FINISHED"),
    ]
    # Preempted with nothing after it: gone (PreemptMode=CANCEL, or requeued too late to see).
    assert timeline(root, "118")[2:] == [
        ("TASK_EVICT", "01:00:00", None),
        ("JOB_END", "01:00:00", "CANCELLED"),
    ]
    # Requeued: the job goes on, wanted until the end of the data.
    assert timeline(root, "119")[2:] == [("TASK_EVICT", "01:00:00", None)]
    assert timeline(root, "120") == []
    assert timeline(root, "124_1")[-1] == ("JOB_END", "01:00:00", "FINISHED")
    assert timeline(root, "124_2") == [("JOB_SUBMIT", "00:00:00", 2)]
    submits = {e["job_id"]: e for e in lines(root, "scheduler") if e["type"] == "JOB_SUBMIT"}
    assert sorted(submits) == ["100", "116", "117+0", "118", "119", "122", "123", "124_1", "124_2"]
    assert [submits[j]["chip_generation"] for j in ("100", "117+0", "122", "123")] == [
        "gpu-a100",
        "gpu-h100",
        "gpu-unknown",
        "gpu-unknown",
    ]
    assert submits["100"]["owner"] == "alice"


def test_daylight_saving_time_and_the_parsable_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read in Los Angeles: 01:30 on 2026-11-01 happened twice (the first, PDT, UTC-7, is
    taken), 02:30 on 2026-03-08 never did (quarantined). `--parsable` (-p) ends each line with
    a `|`, and is read the same."""
    rows = [
        "JobID|Submit|Eligible|Start|End|State|ReqTRES|",
        "1|2026-11-01T01:30:00|2026-11-01T01:30:00|2026-11-01T01:40:00|"
        "2026-11-01T02:10:00|COMPLETED|gres/gpu=1|",
        "2|2026-03-08T02:30:00|2026-03-08T02:30:00|2026-03-08T03:10:00|"
        "2026-03-08T04:00:00|COMPLETED|gres/gpu=1|",
    ]
    src = tmp_path / "sacct.txt"
    src.write_text("\n".join(rows) + "\n")
    root = tmp_path / "root"
    code, out, _ = import_(capsys, src, "--out", root, "--timezone", "America/Los_Angeles")
    assert (code, out.splitlines()[0]) == (
        0,
        "mpg import slurm: 2 records read = 1 converted + 1 quarantined",
    )
    assert "1  nonexistent local time: Submit" in out
    # 02:10 is PST (UTC-8): 100 min after the first 01:30.
    assert [(e["type"], e["ts"]) for e in lines(root, "scheduler")] == [
        ("JOB_SUBMIT", "2026-11-01T08:30:00Z"),
        ("TASK_SCHEDULE", "2026-11-01T08:40:00Z"),
        ("TASK_FINISH", "2026-11-01T10:10:00Z"),
        ("JOB_END", "2026-11-01T10:10:00Z"),
    ]


def test_a_header_without_a_field_quarantines_its_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Eligible missing (a format string without it): every row of that file is quarantined,
    and the other files are read."""
    (tmp_path / "sacct-a.txt").write_text(
        "JobID|Submit|Start|End|State|AllocTRES\n"
        f"1|{at(0)}|{at(1)}|{at(2)}|COMPLETED|gres/gpu=1\n"
        f"1.batch|{at(0)}|{at(1)}|{at(2)}|COMPLETED|gres/gpu=1\n"
    )
    (tmp_path / "sacct-b.txt").write_text(f"{HANDMADE_HEADER}\n{HANDMADE[1]}\n")
    (tmp_path / "sacct-empty.txt").write_text("")
    code, out, _ = import_(capsys, tmp_path, "--out", tmp_path / "root")
    assert (code, out.splitlines()[0]) == (
        0,
        "mpg import slurm: 3 records read = 1 converted + 2 quarantined",
    )
    assert "2  header lacks field: Eligible" in out


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("1|2|3\n", (), "is not sacct --parsable2 output: its first line is not a header"),
        (b"JobID|State\n\xff\n", (), "is not sacct output: it is not UTF-8 text"),
        (HANDMADE_HEADER, ("--gpu-type", "a100"), "--gpu-type 'a100' is not TYPE=ID"),
        (HANDMADE_HEADER, ("--gpu-type", "a100=gpu-x"), "'gpu-x' is not in the chip catalog"),
        (
            HANDMADE_HEADER,
            ("--gpu-type", "a100=gpu-a100", "--gpu-type", "A100=gpu-h100"),
            "--gpu-type gives 'a100' two catalog ids",
        ),
        (HANDMADE_HEADER, ("--timezone", "Mars/Olympus"), "is not an IANA time zone"),
    ],
)
def test_unusable_files_and_options(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str | bytes,
    args: tuple[str, ...],
    message: str,
) -> None:
    src = tmp_path / "sacct.txt"
    if isinstance(content, bytes):
        src.write_bytes(content)
    else:
        src.write_text(content)
    code, _, err = import_(capsys, src, "--out", tmp_path / "root", *args)
    assert code == 2
    assert err.startswith("mpg: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "root").exists()


def test_options_reach_the_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--workload-class and --framework describe every job; --no-runtime writes no spans."""
    src = tmp_path / "sacct.txt"
    src.write_text(f"{HANDMADE_HEADER}\n{HANDMADE[1]}\n")
    root = tmp_path / "root"
    args = ("--workload-class", "serving", "--framework", "pytorch", "--no-runtime")
    assert import_(capsys, src, "--out", root, *args)[0] == 0
    submit = lines(root, "scheduler")[0]
    assert (submit["workload_class"], submit["framework"], submit["chip_generation"]) == (
        "serving",
        "pytorch",
        "gpu-unknown",
    )
    assert not (root / "runtime").exists()
