"""`mpg import philly`: both shapes of Microsoft Philly job logs, their quarantine, and SG / RG per
job-day after `mpg run`, checked against an independent calculation over the raw JSON.

The independent route is plain Python: times read with `zoneinfo` (an ambiguous local time is its
earlier instant, `fold=0`), each interval cut at UTC midnights, chip-seconds = seconds x the
job's first attempt's GPUs; wanted runs from submission to the last attempt's end (to the end of
the data for a job still open), all-allocated is the attempts holding at least that many GPUs,
and productive is the last attempt that ran, when the job passed or is still open.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import pytest

from mpg.cli import main
from tests.support.files import adapter_fixtures

FIXTURES = adapter_fixtures("philly")
ORIGINAL = FIXTURES / "cluster_job_log.json"
SLICE = FIXTURES / "jobs_slice.json"
ZONE = "America/Los_Angeles"
STATES = {"Pass": "FINISHED", "Failed": "FAILED", "Killed": "CANCELLED"}

# Positions (1-based) of the hand-made jobs that cannot be used, and why (see the fixture script).
QUARANTINED = {
    10: "no attempts",
    11: "missing field: jobid",
    12: "unparseable time",
    13: "end before start",
    14: "overlapping attempts",
    15: "zero GPUs",
    16: "attempt without end_time",
    17: "attempt without start_time",
    18: "unknown status",
    19: "duplicate job id",
    20: "not a JSON object",
    21: "attempt ends before submission",
    22: "missing field: status",
    23: "invalid field: detail",
}


def local(text: str | None, zone: str) -> datetime | None:
    if text in (None, "None"):
        return None
    return (
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    )


def by_day(start: datetime, end: datetime, chips: int) -> dict[date, float]:
    """Chip-seconds of [start, end) per UTC day."""
    out: dict[date, float] = defaultdict(float)
    while start < end:
        midnight = datetime.combine(start.date() + timedelta(days=1), time(), tzinfo=UTC)
        cut = min(end, midnight)
        out[start.date()] += (cut - start).total_seconds() * chips
        start = cut
    return out


def usable_jobs(zone: str) -> list[dict[str, Any]]:
    """The jobs that should be converted, in one plain form, from both fixture files."""
    original = json.loads(ORIGINAL.read_text())
    jobs = []
    for position, job in enumerate(original, start=1):
        if position in QUARANTINED:
            continue
        attempts = [
            (
                local(a["start_time"], zone),
                local(a["end_time"], zone),
                sum(len(m["gpus"]) for m in a["detail"]),
            )
            for a in job["attempts"]
        ]
        jobs.append(
            {
                "id": job["jobid"],
                "status": job["status"],
                "submitted": job["submitted_time"],
                "attempts": attempts,
                "team": job["vc"],
                "owner": job["user"],
            }
        )
    # The slice's first job is the hand-made file's first job, read second: a duplicate.
    for job in json.loads(SLICE.read_text())[1:]:
        attempts = [
            (local(a["start_time"], zone), local(a["end_time"], zone), job["num_gpus"])
            for a in job["attempts"]
        ]
        jobs.append(
            {
                "id": job["id"],
                "status": "Pass",
                "submitted": job["submitted_time"],
                "attempts": attempts,
                "team": None,  # the cleaned shape names no virtual cluster and no user
                "owner": None,
            }
        )
    for job in jobs:
        job["submitted"] = local(job["submitted"], zone)
    return jobs


def expected_job_days(zone: str) -> dict[tuple[str, date], dict[str, float]]:
    jobs = usable_jobs(zone)
    data_end = max(
        t for j in jobs for t in (j["submitted"], *(x for a in j["attempts"] for x in a[:2])) if t
    )
    out: dict[tuple[str, date], dict[str, float]] = {}
    for job in jobs:
        submitted, attempts = job["submitted"], job["attempts"]
        chips = attempts[0][2]
        is_open = attempts[-1][1] is None
        wanted = by_day(submitted, data_end if is_open else attempts[-1][1], chips)
        ran = [(max(s, submitted), e or data_end, g) for s, e, g in attempts if s is not None]
        allocated = [by_day(s, e, chips) for s, e, g in ran if g >= chips]
        kept = is_open or STATES[job["status"]] == "FINISHED"
        last = ran[-1]
        productive = by_day(last[0], last[1], chips) if kept and last[2] >= chips else {}
        for day, w in wanted.items():
            a = sum(d.get(day, 0.0) for d in allocated)
            p = productive.get(day, 0.0)
            out[job["id"], day] = {"wanted": w, "allocated": a, "productive": p}
    return out


def import_(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["import", "philly", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """Both fixture files imported together (times in Los Angeles), then `mpg run` over them."""
    tmp = tmp_path_factory.mktemp("philly")
    root, out = tmp / "traces", tmp / "out"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert (
            main(["import", "philly", str(FIXTURES), "--out", str(root), "--timezone", ZONE]) == 0
        )
        assert main(["run", "--traces", str(root), "--out", str(out)]) == 0
    return root, out, buffer.getvalue()


def test_goodput_per_job_day_matches_an_independent_calculation(
    published: tuple[Path, Path, str],
) -> None:
    _, out, _ = published
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, day, chip_generation, workload_class, framework, wanted_chip_s, "
            "all_allocated_chip_s, productive_chip_s, sg, rg, pg from job_day_goodput "
            "where metric_version = 'v1'"
        ).fetchall()
    expected = expected_job_days(ZONE)
    assert {(r[0], r[1]) for r in rows} == set(expected)
    for (
        job_id,
        day,
        generation,
        workload,
        framework,
        wanted,
        allocated,
        productive,
        sg,
        rg,
        pg,
    ) in rows:
        want = expected[job_id, day]
        assert (generation, workload, framework, pg) == ("gpu-unknown", "training", "other", None)
        assert (wanted, allocated, productive) == (
            want["wanted"],
            want["allocated"],
            want["productive"],
        ), (job_id, day)
        assert sg == pytest.approx(want["allocated"] / want["wanted"], rel=1e-12)
        if want["allocated"]:
            assert rg == pytest.approx(want["productive"] / want["allocated"], rel=1e-12)
        else:
            assert rg is None


def test_team_and_owner_add_up_to_the_trace(published: tuple[Path, Path, str]) -> None:
    """Per team (`vc`) and owner (`user`; none in the cleaned shape, and no queue in either):
    wanted and all-allocated chip-seconds summed from the trace equal the published sums."""
    _, out, _ = published
    named = {j["id"]: (j["team"], None, j["owner"]) for j in usable_jobs(ZONE)}
    sums: dict[tuple[Any, ...], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (job, _), want in expected_job_days(ZONE).items():
        sums[named[job]][0] += want["wanted"]
        sums[named[job]][1] += want["allocated"]
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select team, queue, owner, sum(wanted_chip_s), sum(all_allocated_chip_s) "
            "from job_day_goodput where metric_version = 'v1' group by all"
        ).fetchall()
    assert set(sums) == {("ee9e8c", None, "ce2f4c"), (None, None, None)}
    assert {r[:3]: [r[3], r[4]] for r in rows} == sums


def test_each_job_has_its_own_vc_and_user(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixture's jobs share one vc and user: three of them given others (and none)."""
    jobs = json.loads(ORIGINAL.read_text())[:3]
    for job, vc, user in zip(jobs, ("vc-a", "vc-b", ""), ("u1", "u2", None), strict=True):
        job["vc"], job["user"] = vc, user
    src = tmp_path / "cluster_job_log"
    src.write_text(json.dumps(jobs))
    assert import_(capsys, src, "--out", tmp_path / "root", "--timezone", ZONE)[0] == 0
    submits = [e for e in scheduler_lines(tmp_path / "root") if e["type"] == "JOB_SUBMIT"]
    named = {e["job_id"]: (e.get("team"), e.get("owner"), e.get("queue")) for e in submits}
    assert named == {
        jobs[0]["jobid"]: ("vc-a", "u1", None),
        jobs[1]["jobid"]: ("vc-b", "u2", None),
        jobs[2]["jobid"]: (None, None, None),  # an empty vc, a null user: none named
    }


def test_goodput_of_two_jobs_by_hand(published: tuple[Path, Path, str]) -> None:
    """Two hand-made jobs, worked out by hand (times PDT, UTC-7, all on 2017-10-14 / -12 UTC).

    20005 wants 8 GPUs 10:00-15:00 (300 min), holds 8 for 10:01-12:00 (119 min), then 4 for
    12:05-15:00: SG = 119/300, and RG = 0 (its kept, last attempt never had all 8 GPUs).
    20002 was killed: wants 4 GPUs 09:00-11:45:30 (9,930 s), holds them from 09:30 (8,130 s),
    and keeps nothing: SG = 8130/9930, RG = 0.
    """
    _, out, _ = published
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, day, chips_requested, wanted_chip_s, all_allocated_chip_s, "
            "productive_chip_s, sg, rg from job_day_goodput "
            "where job_id in ($1, $2) order by job_id",
            params=["application_1506638472019_20005", "application_1506638472019_20002"],
        ).fetchall()
    assert rows == [
        (
            "application_1506638472019_20002",
            date(2017, 10, 12),
            4,
            39720.0,
            32520.0,
            0.0,
            pytest.approx(8130 / 9930, rel=1e-12),
            0.0,
        ),
        (
            "application_1506638472019_20005",
            date(2017, 10, 14),
            8,
            144000.0,
            57120.0,
            0.0,
            pytest.approx(119 / 300, rel=1e-12),
            0.0,
        ),
    ]


def test_import_counts_and_quarantine(published: tuple[Path, Path, str]) -> None:
    root, out, summary = published
    assert "53 records read = 38 converted + 15 quarantined" in summary
    rows = [
        json.loads(line)
        for f in (root / "quarantine").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    found = {(Path(r["file"]).name, r["line"]): r["reason"] for r in rows}
    assert found == {
        **{("cluster_job_log.json", p): reason for p, reason in QUARANTINED.items()},
        ("jobs_slice.json", 1): "duplicate job id",
    }
    not_object = next(r for r in rows if r["reason"] == "not a JSON object")
    assert json.loads(not_object["raw"]) == json.loads(ORIGINAL.read_text())[19]
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        counts = "select source = 'import', count(*) from quarantine group by all"
        assert db.sql(counts).fetchall() == [(True, len(rows))]


def scheduler_lines(root: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for f in sorted((root / "scheduler").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]


def test_events_of_one_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's example job, times read in Los Angeles (PDT, UTC-7), and a failed one on two
    machines: every event, exactly."""
    jobs = json.loads(ORIGINAL.read_text())[:2]
    src = tmp_path / "cluster_job_log"
    src.write_text(json.dumps(jobs))
    assert import_(capsys, src, "--out", tmp_path / "root", "--timezone", ZONE)[0] == 0
    events = scheduler_lines(tmp_path / "root")
    first = [e for e in events if e["job_id"] == "application_1506638472019_14199"]
    assert sorted(first, key=lambda e: (e["ts"], e["type"])) == [
        {
            "type": "JOB_SUBMIT",
            "ts": "2017-10-07T08:11:39Z",
            "job_id": "application_1506638472019_14199",
            "chips_requested": 8,
            "chip_generation": "gpu-unknown",
            "workload_class": "training",
            "framework": "other",
            "owner": "ce2f4c",
            "team": "ee9e8c",  # its vc; the trace has no queue
        },
        {
            "type": "TASK_SCHEDULE",
            "ts": "2017-10-07T08:12:09Z",
            "job_id": "application_1506638472019_14199",
            "task_index": 0,
            "chips": 8,
        },
        {
            "type": "TASK_FAIL",
            "ts": "2017-10-07T08:13:23Z",
            "job_id": "application_1506638472019_14199",
            "task_index": 0,
        },
        {
            "type": "TASK_SCHEDULE",
            "ts": "2017-10-07T08:13:30Z",
            "job_id": "application_1506638472019_14199",
            "task_index": 0,
            "chips": 8,
        },
        {
            "type": "JOB_END",
            "ts": "2017-10-09T13:53:12Z",
            "job_id": "application_1506638472019_14199",
            "state": "FINISHED",
        },
        {
            "type": "TASK_FINISH",
            "ts": "2017-10-09T13:53:12Z",
            "job_id": "application_1506638472019_14199",
            "task_index": 0,
        },
    ]
    failed = [
        (e["type"], e.get("chips"), e.get("state")) for e in events if e["job_id"].endswith("20001")
    ]
    assert failed == [  # in time order: three attempts, each scheduled and failed
        ("JOB_SUBMIT", None, None),
        *[("TASK_SCHEDULE", 16, None), ("TASK_FAIL", None, None)] * 3,
        ("JOB_END", None, "FAILED"),
    ]
    spans = [
        json.loads(line)
        for f in (tmp_path / "root" / "runtime").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert [
        (s["attempt"], s["start"], s["end"]) for s in spans if s["job_id"].endswith("14199")
    ] == [
        (0, "2017-10-07T08:12:09Z", "2017-10-07T08:13:23Z"),
        (1, "2017-10-07T08:13:30Z", "2017-10-09T13:53:12Z"),
    ]


def test_options_reach_the_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Default zone UTC; --chip-generation and --framework; --no-runtime writes no spans; a
    killed job's last release is an eviction."""
    jobs = json.loads(ORIGINAL.read_text())[2:3]
    src = tmp_path / "killed.json"
    src.write_text(json.dumps(jobs))
    args = (
        "--out",
        tmp_path / "root",
        "--chip-generation",
        "gpu-v100",
        "--framework",
        "pytorch",
        "--no-runtime",
    )
    assert import_(capsys, src, *args)[0] == 0
    events = scheduler_lines(tmp_path / "root")
    assert [(e["type"], e["ts"]) for e in events] == [
        ("JOB_SUBMIT", "2017-10-12T09:00:00Z"),
        ("TASK_SCHEDULE", "2017-10-12T09:30:00Z"),
        ("TASK_EVICT", "2017-10-12T11:45:30Z"),
        ("JOB_END", "2017-10-12T11:45:30Z"),
    ]
    assert (events[0]["chip_generation"], events[0]["framework"], events[3]["state"]) == (
        "gpu-v100",
        "pytorch",
        "CANCELLED",
    )
    assert not (tmp_path / "root" / "runtime").exists()


def test_daylight_saving_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In Los Angeles, 01:30 on 2017-11-05 happened twice (read as the first, PDT, UTC-7; 02:10
    that day is PST, UTC-8) and 02:30 on 2018-03-11 never did (quarantined); read as UTC, both
    are plain times."""
    jobs = [
        {
            "id": "ambiguous",
            "num_gpus": 2,
            "submitted_time": "2017-11-05 01:30:00",
            "attempts": [{"start_time": "2017-11-05 01:40:00", "end_time": "2017-11-05 02:10:00"}],
        },
        {
            "id": "gap",
            "num_gpus": 2,
            "submitted_time": "2018-03-11 02:30:00",
            "attempts": [{"start_time": "2018-03-11 03:10:00", "end_time": "2018-03-11 04:00:00"}],
        },
    ]
    src = tmp_path / "jobs.json"
    src.write_text(json.dumps(jobs))
    code, out, _ = import_(capsys, src, "--out", tmp_path / "la", "--timezone", ZONE)
    assert (code, out.splitlines()[0]) == (
        0,
        "mpg import philly: 2 records read = 1 converted + 1 quarantined",
    )
    assert "1  nonexistent local time" in out
    assert [(e["job_id"], e["ts"]) for e in scheduler_lines(tmp_path / "la")] == [
        ("ambiguous", "2017-11-05T08:30:00Z"),
        ("ambiguous", "2017-11-05T08:40:00Z"),
        ("ambiguous", "2017-11-05T10:10:00Z"),
        ("ambiguous", "2017-11-05T10:10:00Z"),
    ]
    assert import_(capsys, src, "--out", tmp_path / "utc")[0] == 0
    assert [e["ts"] for e in scheduler_lines(tmp_path / "utc") if e["type"] == "JOB_SUBMIT"] == [
        "2017-11-05T01:30:00Z",
        "2018-03-11T02:30:00Z",
    ]


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ('[{"name": "pod", "num_gpu": 1}]', (), "not a Philly job log: its objects have neither"),
        ('{"jobid": "a"}', (), "not a Philly job log: not a JSON list of jobs"),
        ('[{"jobid": ', (), "not a Philly job log: not readable as JSON"),
        (
            "[]",
            ("--timezone", "Mars/Olympus"),
            "--timezone 'Mars/Olympus' is not an IANA time zone",
        ),
        (
            "[]",
            ("--chip-generation", "gpu-x"),
            "--chip-generation 'gpu-x' is not in the chip catalog",
        ),
    ],
)
def test_unusable_files_and_options(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    src = tmp_path / "jobs.json"
    src.write_text(content)
    code, _, err = import_(capsys, src, "--out", tmp_path / "root", *args)
    assert code == 2
    assert err.startswith("mpg: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "root").exists()


def test_gzip_and_an_empty_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The trace ships compressed: a gzipped log reads the same; an empty list is zero jobs."""
    (tmp_path / "cluster_job_log.gz").write_bytes(gzip.compress(ORIGINAL.read_bytes()))
    (tmp_path / "empty.json").write_text("[]")
    code, out, _ = import_(capsys, tmp_path, "--out", tmp_path / "root")
    assert (code, out.splitlines()[0]) == (
        0,
        "mpg import philly: 24 records read = 10 converted + 14 quarantined",
    )
