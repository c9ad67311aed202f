"""`mpg.adapters.philly.convert` on a few hand-made jobs of both shapes of Microsoft Philly's job
log, without the CLI: every canonical record and quarantine row, worked out by hand from the
rules of docs/adapters/philly.md. (Real trace slices through `mpg import` and `mpg run`:
tests/e2e/adapters/test_philly.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.conversion import convert, quarantined, records, unordered


def _log(path: Path, jobs: list[Any]) -> Path:
    path.write_text(json.dumps(jobs))
    return path


def _machines(*gpus: int) -> list[dict[str, Any]]:
    """An attempt's `detail`: one machine per count, each with that many GPUs."""
    return [{"ip": f"m{i}", "gpus": [f"gpu{g}" for g in range(n)]} for i, n in enumerate(gpus)]


def _job(job_id: str, status: str, submitted: str, *attempts: tuple[Any, Any, list]) -> dict:
    return {
        "jobid": job_id,
        "status": status,
        "submitted_time": submitted,
        "user": "u1",
        "vc": "vc1",
        "attempts": [{"start_time": s, "end_time": e, "detail": d} for s, e, d in attempts],
    }


def test_a_job_that_failed_once_then_passed(tmp_path: Path) -> None:
    """Two attempts on 2 x 2 and then 1 x 4 GPUs (times read as UTC, the default): the first
    attempt's 4 GPUs are the request, the first release is a failure (another attempt follows),
    the last a finish, and each attempt is one step span."""
    log = _log(
        tmp_path / "cluster_job_log",
        [
            _job(
                "app_1",
                "Pass",
                "2017-10-07 08:00:00",
                ("2017-10-07 08:10:00", "2017-10-07 09:00:00", _machines(2, 2)),
                ("2017-10-07 09:05:00", "2017-10-07 12:00:00", _machines(4)),
            )
        ],
    )
    conversion = convert("philly", [log])
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (1, 1, [])
    job = {"job_id": "app_1"}
    assert unordered(records(conversion, "scheduler")) == unordered(
        [
            {"type": "JOB_SUBMIT", "ts": "2017-10-07T08:00:00Z", **job, "chips_requested": 4,
             "chip_generation": "gpu-unknown", "workload_class": "training", "framework": "other",
             "owner": "u1", "team": "vc1"},
            {"type": "TASK_SCHEDULE", "ts": "2017-10-07T08:10:00Z", **job, "task_index": 0,
             "chips": 4},
            {"type": "TASK_FAIL", "ts": "2017-10-07T09:00:00Z", **job, "task_index": 0},
            {"type": "TASK_SCHEDULE", "ts": "2017-10-07T09:05:00Z", **job, "task_index": 0,
             "chips": 4},
            {"type": "TASK_FINISH", "ts": "2017-10-07T12:00:00Z", **job, "task_index": 0},
            {"type": "JOB_END", "ts": "2017-10-07T12:00:00Z", **job, "state": "FINISHED"},
        ]
    )  # fmt: skip
    assert records(conversion, "runtime") == [
        {**job, "attempt": 0, "kind": "step", "start": "2017-10-07T08:10:00Z",
         "end": "2017-10-07T09:00:00Z", "step": 0},
        {**job, "attempt": 1, "kind": "step", "start": "2017-10-07T09:05:00Z",
         "end": "2017-10-07T12:00:00Z", "step": 0},
    ]  # fmt: skip


def test_a_killed_job_and_one_still_running_in_los_angeles(tmp_path: Path) -> None:
    """PDT is UTC-7 in October. The killed job's only attempt ends in an eviction and the job
    CANCELLED; the running one (no end_time) has no release and no JOB_END, and its span ends
    at the latest time in the input: the killed job's end, 11:45:30 PDT = 18:45:30Z."""
    log = _log(
        tmp_path / "jobs.json",
        [
            _job("killed", "Killed", "2017-10-12 09:00:00",
                 ("2017-10-12 09:30:00", "2017-10-12 11:45:30", _machines(1, 1))),
            _job("running", "Running", "2017-10-12 10:00:00",
                 ("2017-10-12 10:15:00", None, _machines(8))),
        ],
    )  # fmt: skip
    conversion = convert("philly", [log], "--timezone", "America/Los_Angeles")
    assert (conversion.read, conversion.converted) == (2, 2)
    events = [
        (e["job_id"], e["type"], e["ts"], e.get("state")) for e in records(conversion, "scheduler")
    ]
    assert sorted(events, key=lambda e: (e[0], e[2])) == [
        ("killed", "JOB_SUBMIT", "2017-10-12T16:00:00Z", None),
        ("killed", "TASK_SCHEDULE", "2017-10-12T16:30:00Z", None),
        ("killed", "TASK_EVICT", "2017-10-12T18:45:30Z", None),
        ("killed", "JOB_END", "2017-10-12T18:45:30Z", "CANCELLED"),
        ("running", "JOB_SUBMIT", "2017-10-12T17:00:00Z", None),
        ("running", "TASK_SCHEDULE", "2017-10-12T17:15:00Z", None),
    ]  # fmt: skip
    spans = {s["job_id"]: (s["start"], s["end"]) for s in records(conversion, "runtime")}
    assert spans == {
        "killed": ("2017-10-12T16:30:00Z", "2017-10-12T18:45:30Z"),
        "running": ("2017-10-12T17:15:00Z", "2017-10-12T18:45:30Z"),
    }


def test_an_attempt_logged_before_its_submission_starts_at_the_submission(tmp_path: Path) -> None:
    log = _log(
        tmp_path / "jobs.json",
        [_job("early", "Pass", "2017-10-07 10:00:00",
              ("2017-10-07 09:59:50", "2017-10-07 10:30:00", _machines(2)))],
    )  # fmt: skip
    conversion = convert("philly", [log])
    schedule = [e for e in records(conversion, "scheduler") if e["type"] == "TASK_SCHEDULE"]
    assert [e["ts"] for e in schedule] == ["2017-10-07T10:00:00Z"]
    assert [s["start"] for s in records(conversion, "runtime")] == ["2017-10-07T10:00:00Z"]


def test_the_cleaned_shape_with_options_and_no_runtime(tmp_path: Path) -> None:
    """marwage's jobs.json: `id` and `num_gpus`, no status (every job there passed), no user or
    vc; the options name the generation, class and framework; --no-runtime writes no spans."""
    log = _log(
        tmp_path / "jobs.json",
        [
            {
                "id": "c1",
                "num_gpus": 8,
                "submitted_time": "2017-10-03 10:00:00",
                "runtime": 60,
                "attempts": [
                    {"start_time": "2017-10-03 10:00:30", "end_time": "2017-10-03 11:00:30"}
                ],
            }
        ],
    )
    options = ("--chip-generation", "gpu-v100", "--workload-class", "serving", "--framework",
               "pytorch", "--no-runtime")  # fmt: skip
    conversion = convert("philly", [log], *options)
    assert unordered(records(conversion, "scheduler")) == unordered(
        [
            {"type": "JOB_SUBMIT", "ts": "2017-10-03T10:00:00Z", "job_id": "c1",
             "chips_requested": 8, "chip_generation": "gpu-v100", "workload_class": "serving",
             "framework": "pytorch"},
            {"type": "TASK_SCHEDULE", "ts": "2017-10-03T10:00:30Z", "job_id": "c1",
             "task_index": 0, "chips": 8},
            {"type": "TASK_FINISH", "ts": "2017-10-03T11:00:30Z", "job_id": "c1", "task_index": 0},
            {"type": "JOB_END", "ts": "2017-10-03T11:00:30Z", "job_id": "c1", "state": "FINISHED"},
        ]
    )  # fmt: skip
    assert records(conversion, "runtime") == []


def test_each_unusable_job_is_quarantined_with_the_first_reason_that_applies(
    tmp_path: Path,
) -> None:
    """One usable job, then one of each fault; a job's `line` is its place in the list (1-based)
    and `raw` its JSON."""
    ok = ("2017-10-07 08:00:00", "2017-10-07 09:00:00", _machines(2))
    jobs: list[Any] = [
        _job("ok", "Pass", "2017-10-07 07:00:00", ok),
        _job("none", "Pass", "2017-10-07 07:00:00"),
        {**_job("nostatus", "Pass", "2017-10-07 07:00:00", ok), "status": None},
        _job("weird", "Exploded", "2017-10-07 07:00:00", ok),
        _job("overlap", "Failed", "2017-10-07 07:00:00", ok,
             ("2017-10-07 08:30:00", "2017-10-07 10:00:00", _machines(2))),
        _job("zero", "Pass", "2017-10-07 07:00:00", (*ok[:2], _machines(0))),
        _job("ok", "Pass", "2017-10-07 07:30:00", ok),
        "oops",
        _job("late", "Pass", "2017-10-07 10:00:00", ok),
        _job("slashes", "Pass", "2017/10/07 07:00:00", ok),
        _job("reversed", "Pass", "2017-10-07 07:00:00", (ok[1], ok[0], ok[2])),
    ]  # fmt: skip
    log = _log(tmp_path / "cluster_job_log", jobs)
    conversion = convert("philly", [log])
    assert (conversion.read, conversion.converted) == (11, 1)
    assert quarantined(conversion) == [
        ("cluster_job_log", 2, "no attempts"),
        ("cluster_job_log", 3, "missing field: status"),
        ("cluster_job_log", 4, "unknown status"),
        ("cluster_job_log", 5, "overlapping attempts"),
        ("cluster_job_log", 6, "zero GPUs"),
        ("cluster_job_log", 7, "duplicate job id"),
        ("cluster_job_log", 8, "not a JSON object"),
        ("cluster_job_log", 9, "attempt ends before submission"),
        ("cluster_job_log", 10, "unparseable time"),
        ("cluster_job_log", 11, "end before start"),
    ]
    raw = conversion.quarantine.sort("line").get_column("raw").to_list()
    assert [json.loads(r) for r in raw] == jobs[1:]
    assert {e["job_id"] for e in records(conversion, "scheduler")} == {"ok"}
