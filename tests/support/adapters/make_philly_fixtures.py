"""Regenerates tests/fixtures/adapters/philly/ (README.md there says what and from where).

    python tests/support/adapters/make_philly_fixtures.py PATH/TO/jobs.json

`jobs.json` is analysis/jobs.json of github.com/marwage/philly-traces (commit b741616), or the
300-job sample of it. Two files come out:
- `jobs_slice.json`: jobs copied unchanged from it, the first five with each number of attempts
  (1 to 5) and the first with each GPU count beyond 4 and 8, in the source's order;
- `cluster_job_log.json`: jobs written by hand in the shape that github.com/msr-fiddle/
  philly-traces documents for `cluster_job_log`, one per case the adapter must handle (below).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "adapters" / "philly"


def machine(ip: str, *gpus: int) -> dict[str, Any]:
    return {"ip": ip, "gpus": [f"gpu{g}" for g in gpus]}


def attempt(start: str | None, end: str | None, *detail: dict[str, Any]) -> dict[str, Any]:
    return {"start_time": start, "end_time": end, "detail": list(detail)}


def job(jobid: str, status: str, submitted: str, *attempts: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": status,
        "vc": "ee9e8c",
        "jobid": jobid,
        "attempts": list(attempts),
        "submitted_time": submitted,
        "user": "ce2f4c",
    }


EIGHT = tuple(range(8))

# The usable cases, then one job per quarantine reason (the test names each by its position).
HANDMADE: list[Any] = [
    # 1. The README's example entry, as printed there: passed on its second attempt.
    job(
        "application_1506638472019_14199",
        "Pass",
        "2017-10-07 01:11:39",
        attempt("2017-10-07 01:12:09", "2017-10-07 01:13:23", machine("m47", *EIGHT)),
        attempt("2017-10-07 01:13:30", "2017-10-09 06:53:12", machine("m412", *EIGHT)),
    ),
    # 2. Failed after three attempts on two machines (16 GPUs), across a UTC midnight.
    job(
        "application_1506638472019_20001",
        "Failed",
        "2017-10-10 16:55:00",
        attempt(
            "2017-10-10 17:00:00",
            "2017-10-10 18:30:00",
            machine("m101", *EIGHT),
            machine("m102", *EIGHT),
        ),
        attempt(
            "2017-10-10 18:31:00",
            "2017-10-11 02:10:00",
            machine("m101", *EIGHT),
            machine("m102", *EIGHT),
        ),
        attempt(
            "2017-10-11 02:15:00",
            "2017-10-11 03:00:00",
            machine("m103", *EIGHT),
            machine("m104", *EIGHT),
        ),
    ),
    # 3. Killed during its only attempt, on half a machine.
    job(
        "application_1506638472019_20002",
        "Killed",
        "2017-10-12 09:00:00",
        attempt("2017-10-12 09:30:00", "2017-10-12 11:45:30", machine("m7", 4, 5, 6, 7)),
    ),
    # 4. Still running at the snapshot: its last attempt has no end (null).
    job(
        "application_1506638472019_20003",
        "Pass",
        "2017-10-13 20:00:00",
        attempt("2017-10-13 20:05:00", "2017-10-13 21:00:00", machine("m8", *EIGHT)),
        attempt("2017-10-13 21:10:00", None, machine("m9", *EIGHT)),
    ),
    # 5. Waiting for another attempt at the snapshot: its last attempt never started.
    job(
        "application_1506638472019_20004",
        "Failed",
        "2017-10-13 08:00:00",
        attempt("2017-10-13 08:00:30", "2017-10-13 09:00:00", machine("m10", 0, 1)),
        attempt(None, None),
    ),
    # 6. A second attempt on fewer GPUs (4 of the 8 it first had): not all allocated.
    job(
        "application_1506638472019_20005",
        "Pass",
        "2017-10-14 10:00:00",
        attempt(
            "2017-10-14 10:01:00",
            "2017-10-14 12:00:00",
            machine("m11", 0, 1, 2, 3),
            machine("m12", 0, 1, 2, 3),
        ),
        attempt("2017-10-14 12:05:00", "2017-10-14 15:00:00", machine("m11", 4, 5, 6, 7)),
    ),
    # 7. Logged as starting ten seconds before its submission.
    job(
        "application_1506638472019_20006",
        "Pass",
        "2017-10-15 12:00:10",
        attempt("2017-10-15 12:00:00", "2017-10-15 13:00:00", machine("m13", 3)),
    ),
    # 8. Running at the snapshot, its missing end written as the string "None".
    job(
        "application_1506638472019_20007",
        "Killed",
        "2017-10-15 14:00:00",
        attempt("2017-10-15 14:10:00", "None", machine("m14", 0, 1, 2, 3)),
    ),
    # 9. In the hour repeated when DST ended (America/Los_Angeles): read as the earlier one.
    job(
        "application_1506638472019_20008",
        "Pass",
        "2017-11-05 01:20:00",
        attempt("2017-11-05 01:30:00", "2017-11-05 03:00:00", machine("m15", 0)),
    ),
    # 10. no attempts
    job("application_1506638472019_20010", "Killed", "2017-10-16 10:00:00"),
    # 11. missing field: jobid
    {k: v for k, v in job("x", "Pass", "2017-10-16 10:00:00").items() if k != "jobid"},
    # 12. unparseable time
    job(
        "application_1506638472019_20012",
        "Pass",
        "2017/10/16 10:00",
        attempt("2017-10-16 10:01:00", "2017-10-16 11:00:00", machine("m1", 0)),
    ),
    # 13. end before start
    job(
        "application_1506638472019_20013",
        "Pass",
        "2017-10-16 09:00:00",
        attempt("2017-10-16 10:00:00", "2017-10-16 09:30:00", machine("m1", 0)),
    ),
    # 14. overlapping attempts
    job(
        "application_1506638472019_20014",
        "Pass",
        "2017-10-16 09:00:00",
        attempt("2017-10-16 10:00:00", "2017-10-16 11:00:00", machine("m1", 0)),
        attempt("2017-10-16 10:30:00", "2017-10-16 12:00:00", machine("m2", 0)),
    ),
    # 15. zero GPUs
    job(
        "application_1506638472019_20015",
        "Pass",
        "2017-10-16 09:00:00",
        attempt("2017-10-16 10:00:00", "2017-10-16 11:00:00", machine("m1")),
    ),
    # 16. attempt without end_time, before another attempt
    job(
        "application_1506638472019_20016",
        "Failed",
        "2017-10-16 09:00:00",
        attempt("2017-10-16 10:00:00", None, machine("m1", 0)),
        attempt("2017-10-16 11:00:00", "2017-10-16 12:00:00", machine("m1", 0)),
    ),
    # 17. attempt without start_time, yet with an end
    job(
        "application_1506638472019_20017",
        "Failed",
        "2017-10-16 09:00:00",
        attempt(None, "2017-10-16 11:00:00", machine("m1", 0)),
    ),
    # 18. unknown status
    job(
        "application_1506638472019_20018",
        "Running",
        "2017-10-16 09:00:00",
        attempt("2017-10-16 10:00:00", "2017-10-16 11:00:00", machine("m1", 0)),
    ),
    # 19. duplicate job id (job 3's, with other times)
    job(
        "application_1506638472019_20002",
        "Pass",
        "2017-10-16 09:00:00",
        attempt("2017-10-16 10:00:00", "2017-10-16 11:00:00", machine("m1", 0)),
    ),
    # 20. not a JSON object
    "application_1506638472019_20020",
    # 21. attempt ends before submission
    job(
        "application_1506638472019_20021",
        "Pass",
        "2017-10-16 10:00:00",
        attempt("2017-10-16 09:00:00", "2017-10-16 09:30:00", machine("m1", 0)),
    ),
    # 22. missing field: status
    {
        k: v
        for k, v in job(
            "application_1506638472019_20022",
            "Pass",
            "2017-10-16 09:00:00",
            attempt("2017-10-16 10:00:00", "2017-10-16 11:00:00", machine("m1", 0)),
        ).items()
        if k != "status"
    },
    # 23. invalid field: detail
    job(
        "application_1506638472019_20023",
        "Pass",
        "2017-10-16 09:00:00",
        {"start_time": "2017-10-16 10:00:00", "end_time": "2017-10-16 11:00:00", "detail": "m1"},
    ),
    # 24. Usable again: running at the snapshot, with a status that is no outcome (yet).
    job(
        "application_1506638472019_20024",
        "Running",
        "2017-10-17 09:00:00",
        attempt("2017-10-17 09:05:00", None, machine("m16", 0, 1)),
    ),
]


def slice_of(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first five jobs with each number of attempts, and the first with each GPU count
    other than 4 and 8, in the source's order."""
    chosen: set[int] = set()
    for n in range(1, 6):
        chosen.update([i for i, j in enumerate(jobs) if len(j["attempts"]) == n][:5])
    for gpus in sorted({j["num_gpus"] for j in jobs} - {4, 8}):
        chosen.add(next(i for i, j in enumerate(jobs) if j["num_gpus"] == gpus))
    return [jobs[i] for i in sorted(chosen)]


def main(source: Path) -> None:
    jobs = json.loads(source.read_text(encoding="utf-8"))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "jobs_slice.json").write_text(json.dumps(slice_of(jobs), indent=1) + "\n", "utf-8")
    (OUT / "cluster_job_log.json").write_text(json.dumps(HANDMADE, indent=4) + "\n", "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
