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

import argparse
import contextlib
import io
import json
import re
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from mpg.adapters import arguments, slurm
from mpg.cli import main
from tests.support.files import adapter_fixtures

FIXTURES = adapter_fixtures("slurm")
HET = FIXTURES / "het"  # another cluster (two nodes): heterogeneous jobs
HET_AS_OF = "2026-11-27T12:14:17Z"  # when its sacct ran (the script's log)
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
    # Pending: the array row 32_[1-3] is three jobs; 30 is a heterogeneous job, 30+0 its CPU
    # component (nothing of it is written), 30+1 its GPU one.
    for job in ("29", "30", "32_1", "32_2", "32_3"):
        assert timeline(root, job) == [("JOB_SUBMIT", "21:04:12", 1)]


def test_the_same_input_imports_to_the_same_bytes(
    final_root: tuple[Path, str, str], tmp_path: Path
) -> None:
    """A second import of sacct.txt writes the first one's files byte for byte (the events in
    time order, not in the order a grouping happened to give)."""
    root, _, _ = final_root
    again = tmp_path / "traces"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["import", "slurm", str(FINAL), "--out", str(again), *GPU_TYPES]) == 0
    written = sorted(p.relative_to(root) for p in root.rglob("*.jsonl"))
    assert written == sorted(p.relative_to(again) for p in again.rglob("*.jsonl"))
    assert [(again / p).read_bytes() for p in written] == [(root / p).read_bytes() for p in written]


def test_jobs_gpus_and_quarantine(final_root: tuple[Path, str, str]) -> None:
    root, summary, err = final_root
    assert summary.splitlines()[0] == (
        "mpg import slurm: 35 records read = 34 converted + 1 quarantined"
    )
    submits = {e["job_id"]: e for e in lines(root, "scheduler") if e["type"] == "JOB_SUBMIT"}
    assert sorted(submits) == sorted(
        [str(j) for j in (1, 3, 4, 5, 9, 10, 11, 16, 17, 18, 20, 21, 22, 23)]
        + [str(j) for j in range(24, 30)]
        + ["30"]
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
    # Partition is the queue; this file has no Account column: no team.
    queues = {j: e["queue"] for j, e in submits.items() if "team" not in e}
    assert queues == {j: "high" if j in ("4", "9") else "low" for j in submits}
    quarantined = [json.loads(line) for f in (root / "quarantine").glob("*") for line in f.open()]
    assert sorted((q["line"], q["reason"], q["raw"].split("|")[0]) for q in quarantined) == [
        (22, "no GPU: no gres/gpu in ReqTRES or AllocTRES", "19"),
    ]
    assert err == (
        "mpg import slurm: 1 CPU-only components of heterogeneous jobs are parts of their jobs: "
        "nothing written for them (their jobs are all-allocated while the GPU ones hold GPUs)\n"
    )


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
        "mpg import slurm: 44 records read = 43 converted + 1 quarantined",
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


def sacct_jobs(path: Path) -> dict[str, dict[int, list[dict[str, str]]]]:
    """Each job's components (a heterogeneous job `123`'s are `123+0`, `123+1`, ...; any other
    job is its own component 0) and their rows, in Submit order: steps left out, pending array
    tasks spread."""
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
    gangs: dict[str, dict[int, list[dict[str, str]]]] = defaultdict(dict)
    for job, found in jobs.items():
        gang, _, component = job.partition("+")
        gangs[gang][int(component or 0)] = sorted(found, key=lambda row: row["Submit"])
    return gangs


Interval = tuple[datetime, datetime]


def overlap(a: list[Interval], b: list[Interval]) -> list[Interval]:
    """The instants in both lists of intervals."""
    return [(max(s, t), min(e, f)) for s, e in a for t, f in b if max(s, t) < min(e, f)]


def expected_job_days(
    path: Path, as_of: str | None = None
) -> dict[tuple[str, date], tuple[float, float, float]]:
    """Per job and day: wanted, all-allocated and productive chip-seconds. A job wants GPUs
    from its first Eligible (or allocation) to its last End once every component has ended, else
    to the end of the data (when sacct ran, `as_of`, or the file's latest time); it is
    all-allocated while each component that asks for GPUs holds them; its last attempt (the
    last incarnation its components were allocated in) keeps its progress unless its leader
    (`+0`, else the job itself) ended other than COMPLETED."""
    jobs = {
        j: parts
        for j, parts in sacct_jobs(path).items()
        if any(gpus(rows[0]["ReqTRES"]) for rows in parts.values())
    }
    times = [
        t
        for parts in jobs.values()
        for rows in parts.values()
        for r in rows
        for f in ("Submit", "Eligible", "Start", "End")
        if (t := utc(r[f])) is not None
    ]
    data_end = datetime.fromisoformat(as_of) if as_of else max(times)
    out = {}
    for job, parts in jobs.items():
        asks = {c: gpus(rows[0]["ReqTRES"]) for c, rows in parts.items()}
        chips = sum(asks.values())
        ran = {
            c: [r for r in rows if r["AllocTRES"] and utc(r["Start"])] for c, rows in parts.items()
        }
        ended = all(rows[-1]["State"].split(" ")[0] in ENDED for rows in parts.values())
        eligible = [utc(r["Eligible"]) for rows in parts.values() for r in rows]
        starts = [utc(r["Start"]) for rows in ran.values() for r in rows]
        end = max(utc(rows[-1]["End"]) for rows in parts.values()) if ended else data_end
        wanted = by_day(min(t for t in eligible + starts if t), end, chips)
        allocated = [(min(starts, default=end), end)]
        for c, rows in ran.items():
            if asks[c]:  # a CPU component holds no GPU: it is all-allocated whatever it does
                held = [
                    (utc(r["Start"]), utc(r["End"]) or data_end)
                    for r in rows
                    if gpus(r["AllocTRES"]) >= asks[c]
                ]
                allocated = overlap(allocated, held)
        attempts = max((len(rows) for rows in ran.values()), default=0)
        leader = parts[0][-1]["State"].split(" ")[0]
        productive = []
        if attempts and (not ended or leader == "COMPLETED"):
            last = [rows[-1] for rows in ran.values() if len(rows) == attempts]
            window = (
                min(utc(r["Start"]) for r in last),
                max(utc(r["End"]) or data_end for r in last),
            )
            productive = overlap(allocated, [window])
        for day, w in wanted.items():
            out[job, day] = (
                w,
                sum(by_day(s, e, chips).get(day, 0.0) for s, e in allocated),
                sum(by_day(s, e, chips).get(day, 0.0) for s, e in productive),
            )
    return out


def import_and_run(tmp: Path, *import_args: str | Path) -> Path:
    """`mpg import slurm` into tmp/traces, then `mpg run`: the output folder."""
    root, out = tmp / "traces", tmp / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["import", "slurm", *map(str, import_args), "--out", str(root)]) == 0
        assert main(["run", "--traces", str(root), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures' outputs imported together (the final, mid-way and steps outputs, whose
    rows are merged), then `mpg run` over them."""
    return import_and_run(tmp_path_factory.mktemp("slurm-run"), FINAL, MIDWAY, STEPS, *GPU_TYPES)


@pytest.fixture(scope="module")
def het_published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The heterogeneous jobs' cluster (het/: its outputs with and without steps), imported as
    of when its sacct ran, then `mpg run`."""
    tmp = tmp_path_factory.mktemp("slurm-het")
    return import_and_run(tmp, HET, "--as-of", HET_AS_OF, *GPU_TYPES)


@pytest.mark.parametrize(
    ("folder", "sacct", "as_of"),
    [("published", FINAL, None), ("het_published", HET / "sacct.txt", HET_AS_OF)],
)
def test_goodput_per_job_day_matches_an_independent_calculation(
    request: pytest.FixtureRequest, folder: str, sacct: Path, as_of: str | None
) -> None:
    published = request.getfixturevalue(folder)
    with duckdb.connect(str(published / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, day, wanted_chip_s, all_allocated_chip_s, productive_chip_s, sg, rg, "
            "pg from job_day_goodput where metric_version = 'v1'"
        ).fetchall()
        counts = "select source = 'import', count(*) from quarantine group by all"
        imported = (published.parent / "traces" / "quarantine").glob("*.jsonl")
        quarantined = sum(len(f.read_text().splitlines()) for f in imported)
        assert db.sql(counts).fetchall() == ([(True, quarantined)] if quarantined else [])
    expected = expected_job_days(sacct, as_of)
    assert {(r[0], r[1]) for r in rows} == set(expected)
    for job_id, day, wanted, allocated, productive, sg, rg, pg in rows:
        want = expected[job_id, day]
        assert (wanted, allocated, productive) == want, job_id
        assert sg == pytest.approx(want[1] / want[0], rel=1e-12)
        assert rg == (pytest.approx(want[2] / want[1], rel=1e-12) if want[1] else None)
        assert pg is None


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


def gang_timeline(root: Path, job_id: str) -> list[tuple[Any, ...]]:
    """`timeline`, each task event with its task (a heterogeneous job's component)."""
    events = [e for e in lines(root, "scheduler") if e["job_id"] == job_id]
    order = {"JOB_SUBMIT": 0, "JOB_END": 3}
    events.sort(key=lambda e: (e["ts"], order.get(e["type"], 1), e.get("task_index", -1)))
    return [
        (e["type"], e["ts"][11:19], e.get("task_index"), e.get("chips", e.get("state")))
        if e["type"] != "JOB_SUBMIT"
        else (e["type"], e["ts"][11:19], None, e["chips_requested"])
        for e in events
    ]


def test_heterogeneous_jobs_are_one_gang_by_hand(het_published: Path) -> None:
    """het/sacct.txt read by hand (README there). Job 3: components 3+0 (1 h100) and 3+1 (2 h100)
    start at 12:10:51 (eligible 12:10:50); 3+1 is cancelled at 12:10:54, the leader runs on to
    12:11:03: 3 chips want 13 s, all-allocated 3 s (SG 3/13), the leader completed (RG 1). Job 8
    runs 3 s, is requeued whole at 12:11:19 and runs again 12:14:07-12:14:13 after waiting for
    the backfill scheduler: SG 9/178, RG 6/9. Job 12's CPU component is no task: its 2 h100
    want 6 s and hold 4 (SG 4/6). Job 10 fails after 3 s of 4 (RG 0). Job 14 runs when sacct
    runs (12:14:17): from 12:14:13, allocated from 12:14:14."""
    root = het_published.parent / "traces"
    assert gang_timeline(root, "3") == [
        ("JOB_SUBMIT", "12:10:50", None, 3),
        ("TASK_SCHEDULE", "12:10:51", 0, 1),
        ("TASK_SCHEDULE", "12:10:51", 1, 2),
        ("TASK_EVICT", "12:10:54", 1, None),
        ("TASK_FINISH", "12:11:03", 0, None),
        ("JOB_END", "12:11:03", None, "FINISHED"),
    ]
    assert gang_timeline(root, "8") == [
        ("JOB_SUBMIT", "12:11:15", None, 3),
        ("TASK_SCHEDULE", "12:11:16", 0, 1),
        ("TASK_SCHEDULE", "12:11:16", 1, 2),
        ("TASK_EVICT", "12:11:19", 0, None),
        ("TASK_EVICT", "12:11:19", 1, None),
        ("TASK_SCHEDULE", "12:14:07", 0, 1),
        ("TASK_SCHEDULE", "12:14:07", 1, 2),
        ("TASK_FINISH", "12:14:13", 0, None),
        ("TASK_FINISH", "12:14:13", 1, None),
        ("JOB_END", "12:14:13", None, "FINISHED"),
    ]
    assert spans(root, "8") == [(0, "12:11:16", "12:11:19"), (1, "12:14:07", "12:14:13")]
    assert gang_timeline(root, "12") == [
        ("JOB_SUBMIT", "12:11:19", None, 2),
        ("TASK_SCHEDULE", "12:11:21", 1, 2),
        ("TASK_FINISH", "12:11:25", 1, None),
        ("JOB_END", "12:11:25", None, "FINISHED"),
    ]
    assert spans(root, "14") == [(0, "12:14:14", "12:14:17")]  # running: to --as-of
    assert gang_timeline(root, "16") == [("JOB_SUBMIT", "12:14:14", None, 8)]
    with duckdb.connect(str(het_published / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, wanted_chip_s, all_allocated_chip_s, productive_chip_s, sg, rg "
            "from job_day_goodput where job_id in ('3', '8', '10', '12', '14') order by job_id"
        ).fetchall()
    assert rows == [
        ("10", 8.0, 6.0, 0.0, 0.75, 0.0),
        ("12", 12.0, 8.0, 8.0, pytest.approx(4 / 6, rel=1e-12), 1.0),
        ("14", 8.0, 6.0, 6.0, 0.75, 1.0),
        ("3", 39.0, 9.0, 9.0, pytest.approx(3 / 13, rel=1e-12), 1.0),
        ("8", 534.0, 27.0, 18.0, pytest.approx(9 / 178, rel=1e-12), pytest.approx(6 / 9)),
    ]


def test_team_queue_and_owner_add_up_to_the_sacct_rows(het_published: Path) -> None:
    """Per team (Account of a job's first component with GPUs), queue (its Partition) and owner
    (User): wanted and all-allocated chip-seconds summed from the rows by hand equal the
    published job-days' sums, and add up to the fleet's."""
    jobs = sacct_jobs(HET / "sacct.txt")
    expected = expected_job_days(HET / "sacct.txt", HET_AS_OF)
    by: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (job, _), (wanted, allocated, _) in expected.items():
        first = next(rows[-1] for _, rows in sorted(jobs[job].items()) if gpus(rows[0]["ReqTRES"]))
        key = (first["Account"], first["Partition"], first["User"])
        by[key][0] += wanted
        by[key][1] += allocated
    assert sorted(by) == [("physics", "gpu", "root"), ("vision", "gpu", "root")]
    with duckdb.connect(str(het_published / "mpg.duckdb"), read_only=True) as db:
        published = db.sql(
            "select team, queue, owner, sum(wanted_chip_s), sum(all_allocated_chip_s) "
            "from job_day_goodput group by all order by all"
        ).fetchall()
        fleet = db.sql("select sum(wanted_chip_s) from job_day_goodput").fetchall()
    assert published == [(*key, *by[key]) for key in sorted(by)]
    assert fleet == [(sum(w for w, _ in by.values()),)]


def test_as_of_before_the_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = import_(
        capsys, HET, "--out", tmp_path / "root", "--as-of", "2026-11-27T12:14:13Z"
    )
    assert (code, err) == (
        2,
        "mpg: error: --as-of 2026-11-27T12:14:13+00:00 is before the input's latest time "
        "2026-11-27T12:14:14+00:00\n",
    )
    code, _, err = import_(capsys, HET, "--out", tmp_path / "root", "--as-of", "2026-11-27T12:15")
    assert (code, err) == (
        2,
        "mpg: error: argument --as-of: '2026-11-27T12:15' needs an offset or Z (e.g. "
        "2026-11-27T12:15:00Z) (see mpg import slurm --help)\n",
    )


GANG_HEADER = "JobID|Account|Partition|User|Submit|Eligible|Start|End|State|AllocTRES"


def gang_row(
    job: str, account: str, partition: str, times: tuple[int | str, ...], state: str, tres: str
) -> str:
    texts = [at(t) if isinstance(t, int) else t for t in times]
    return "|".join([job, account, partition, "ana", *texts, state, tres])


def test_heterogeneous_jobs_converted_without_the_cli(tmp_path: Path) -> None:
    """`convert` on rows written by hand: a heterogeneous job is one job whose components are
    its tasks (a CPU one is none), its team and queue those of its first GPU component; it is
    open while a component runs, and ends with its last component, as its leader did."""
    parser = argparse.ArgumentParser()
    arguments.slurm(parser)
    args = parser.parse_args(["--gpu-type", "a100=gpu-a100", "--gpu-type", "h100=gpu-h100"])
    src = tmp_path / "sacct.txt"
    src.write_text(
        "\n".join(
            [
                GANG_HEADER,
                gang_row("200+0", "data", "cpu", (0, 0, 10, 60), "COMPLETED", "cpu=4"),
                gang_row("200+1", "physics", "gpu", (0, 0, 10, 60), "COMPLETED", A100),
                gang_row("200+2", "vision", "gpu2", (0, 0, 10, 50), "CANCELLED by 0", H100),
                gang_row("201+0", "", "gpu", (0, 1, 10, 40), "COMPLETED", A100),
                gang_row("201+1", "", "gpu", (0, 1, 10, "Unknown"), "RUNNING", A100),
                gang_row("202+0", "ml", "gpu", (0, 0, 10, 30), "FAILED", A100),
                gang_row("202+1", "ml", "gpu", (0, 0, 10, 45), "COMPLETED", A100),
                gang_row("203", "ml", "", (0, 0, 10, 45), "COMPLETED", A100),
            ]
        )
    )
    conversion = slurm.convert([src], args)
    assert (conversion.read, conversion.converted) == (8, 8)
    (batch,) = conversion.batches
    events = batch.scheduler.with_columns(pl.col("ts").dt.strftime("%H:%M")).sort(
        "job_id", "ts", "type", "task_index"
    )
    submits = events.filter(pl.col("type") == "JOB_SUBMIT").select(
        "job_id", "ts", "chips_requested", "chip_generation", "owner", "team", "queue"
    )
    assert submits.rows() == [
        ("200", "00:00", 6, "gpu-unknown", "ana", "physics", "gpu"),  # a100 and h100
        ("201", "00:01", 4, "gpu-a100", "ana", None, "gpu"),  # no Account named
        ("202", "00:00", 4, "gpu-a100", "ana", "ml", "gpu"),
        ("203", "00:00", 2, "gpu-a100", "ana", "ml", None),  # no Partition named
    ]
    others = events.filter(pl.col("type") != "JOB_SUBMIT").select(
        "job_id", "type", "ts", "task_index", "chips", "state"
    )
    assert others.filter(pl.col("job_id") != "203").rows() == [
        ("200", "TASK_SCHEDULE", "00:10", 1, 2, None),
        ("200", "TASK_SCHEDULE", "00:10", 2, 4, None),
        ("200", "TASK_EVICT", "00:50", 2, None, None),
        ("200", "JOB_END", "01:00", None, None, "FINISHED"),  # its leader completed
        ("200", "TASK_FINISH", "01:00", 1, None, None),
        ("201", "TASK_SCHEDULE", "00:10", 0, 2, None),
        ("201", "TASK_SCHEDULE", "00:10", 1, 2, None),
        ("201", "TASK_FINISH", "00:40", 0, None, None),  # 201+1 runs on: the job is open
        ("202", "TASK_SCHEDULE", "00:10", 0, 2, None),
        ("202", "TASK_SCHEDULE", "00:10", 1, 2, None),
        ("202", "TASK_FAIL", "00:30", 0, None, None),
        ("202", "JOB_END", "00:45", None, None, "FAILED"),  # its leader failed
        ("202", "TASK_FINISH", "00:45", 1, None, None),
    ]
    spans = batch.runtime.with_columns(pl.col("start", "end").dt.strftime("%H:%M"))
    assert spans.sort("job_id").select("job_id", "attempt", "start", "end").rows() == [
        ("200", 0, "00:10", "01:00"),
        ("201", 0, "00:10", "01:00"),  # running: to the input's latest time
        ("202", 0, "00:10", "00:45"),
        ("203", 0, "00:10", "00:45"),
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
    row("COMPLETED", "117+1", (0, 0, 30, 60), "cpu=4,node=1"),  # 25: and its CPU one: a part
    row("PREEMPTED", "118", (0, 0, 10, 60), A100),  # 26: preempted and not requeued
    row("REQUEUED", "119", (0, 0, 10, 60), A100),  # 27: requeued, not yet eligible again
    row("CANCELLED by 1000", "120", (0, "Unknown", 5, 5), "", A100),  # 28: never eligible
    row("PENDING", "121_[0-2000000]", (0, 0, "Unknown", "Unknown"), "", A100),  # 29
    row("COMPLETED", "122", (0, 0, 10, 60), "gres/gpu=2", "gres/gpu=2"),  # 30: no GPU type
    row("COMPLETED", "123", (0, 0, 10, 60), "gres/gpu:v100=1,gres/gpu=1"),  # 31: type not given
    row("PENDING", "124_[1-2]", (0, 0, "Unknown", "Unknown"), "", A100),  # 32: stale for 124_1
    row("COMPLETED", "124_1", (0, 0, 10, 60), A100),  # 33
    row("COMPLETED", "125+0", (0, 0, 10, 60), A100),  # 34: its job's other component is bad
    row("COMPLETED", "125+1", (0, 0, "soon", 60), A100),  # 35
    row("COMPLETED", "126+0", (0, 0, 10, 60), "cpu=4,node=1"),  # 36: a het job without GPUs
    row("COMPLETED", "126+1", (0, 0, 10, 60), "cpu=2,node=1"),  # 37
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
    29: "out of range: more than 1000000 pending array tasks",
    34: "another row of its job is quarantined",
    35: "unparseable time: Start",
    36: "no GPU: no gres/gpu in ReqTRES or AllocTRES",
    37: "no GPU: no gres/gpu in ReqTRES or AllocTRES",
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
        "mpg import slurm: 34 records read = 12 converted + 22 quarantined",
    )
    quarantined = [json.loads(line) for f in (root / "quarantine").glob("*") for line in f.open()]
    assert {q["line"]: q["reason"] for q in quarantined} == HANDMADE_QUARANTINE
    assert {q["line"]: q["raw"] for q in quarantined}[3] == HANDMADE[2]
    assert err.splitlines() == [
        "mpg import slurm: 1 job step rows (.batch, .extern, .N) are parts of their jobs: "
        "nothing written for them (sacct --allocations leaves them out)",
        "mpg import slurm: 1 CPU-only components of heterogeneous jobs are parts of their jobs: "
        "nothing written for them (their jobs are all-allocated while the GPU ones hold GPUs)",
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
    assert timeline(root, "117")[1:] == [
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
    assert sorted(submits) == ["100", "116", "117", "118", "119", "122", "123", "124_1", "124_2"]
    assert [submits[j]["chip_generation"] for j in ("100", "117", "122", "123")] == [
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
