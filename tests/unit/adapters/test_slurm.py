"""`mpg.adapters.slurm.convert` on a few hand-written `sacct --parsable2` rows, without the CLI:
every canonical record and quarantine row, worked out by hand from the rules of
docs/adapters/slurm.md. (A real Slurm's output through `mpg import` and `mpg run`:
tests/e2e/adapters/test_slurm.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.support.conversion import convert, quarantined, records, unordered

HEADER = (
    "JobID|JobIDRaw|Partition|Account|User|Submit|Eligible|Start|End|State|ReqTRES|AllocTRES|"
    "NodeList"
)
A100 = "billing=4,cpu=4,gres/gpu:a100=4,gres/gpu=4,node=1"


def _sacct(path: Path, *rows: str) -> Path:
    path.write_text("\n".join((HEADER, *rows)) + "\n")
    return path


def test_a_requeued_job_is_two_attempts_of_one_job(tmp_path: Path) -> None:
    """Job 100 wants 4 a100 from its eligibility (10:00:05, before its first start at 10:01),
    is requeued at 11:00 and completes at 13:00 in its second incarnation; its `.batch` step
    writes nothing. Team = Account, queue = Partition, owner = User."""
    sacct = _sacct(
        tmp_path / "sacct-1.txt",
        f"100|100|gpu|acct|alice|2026-11-22T10:00:00|2026-11-22T10:00:05|2026-11-22T10:01:00|"
        f"2026-11-22T11:00:00|REQUEUED|{A100}|{A100}|n1",
        f"100|100|gpu|acct|alice|2026-11-22T11:00:00|2026-11-22T11:02:00|2026-11-22T11:05:00|"
        f"2026-11-22T13:00:00|COMPLETED|{A100}|{A100}|n1",
        "100.batch|100.batch||acct||2026-11-22T11:05:00|2026-11-22T11:05:00|2026-11-22T11:05:00|"
        "2026-11-22T13:00:00|COMPLETED||cpu=4,gres/gpu=4,mem=0,node=1|n1",
    )
    conversion = convert("slurm", [sacct], "--gpu-type", "a100=gpu-a100")
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (3, 3, [])
    job = {"job_id": "100"}
    assert unordered(records(conversion, "scheduler")) == unordered(
        [
            {"type": "JOB_SUBMIT", "ts": "2026-11-22T10:00:05Z", **job, "chips_requested": 4,
             "chip_generation": "gpu-a100", "workload_class": "training", "framework": "other",
             "owner": "alice", "team": "acct", "queue": "gpu"},
            {"type": "TASK_SCHEDULE", "ts": "2026-11-22T10:01:00Z", **job, "task_index": 0,
             "chips": 4},
            {"type": "TASK_EVICT", "ts": "2026-11-22T11:00:00Z", **job, "task_index": 0},
            {"type": "TASK_SCHEDULE", "ts": "2026-11-22T11:05:00Z", **job, "task_index": 0,
             "chips": 4},
            {"type": "TASK_FINISH", "ts": "2026-11-22T13:00:00Z", **job, "task_index": 0},
            {"type": "JOB_END", "ts": "2026-11-22T13:00:00Z", **job, "state": "FINISHED"},
        ]
    )  # fmt: skip
    assert records(conversion, "runtime") == [
        {**job, "attempt": 0, "kind": "step", "start": "2026-11-22T10:01:00Z",
         "end": "2026-11-22T11:00:00Z", "step": 0},
        {**job, "attempt": 1, "kind": "step", "start": "2026-11-22T11:05:00Z",
         "end": "2026-11-22T13:00:00Z", "step": 0},
    ]  # fmt: skip


def test_running_pending_and_array_tasks_at_the_time_sacct_ran(tmp_path: Path) -> None:
    """A running job (untyped GPUs: gpu-unknown) holds them until --as-of, with no release and
    no JOB_END; a pending one and each task of a pending array `300_[1-2]` are submitted at
    their eligibility and nothing more."""
    sacct = _sacct(
        tmp_path / "sacct-2.txt",
        "200|200|gpu|acct|bob|2026-11-22T12:00:00|2026-11-22T12:00:00|2026-11-22T12:10:00|"
        "Unknown|RUNNING|gres/gpu=2|gres/gpu=2|n2",
        "201|201|gpu|acct|bob|2026-11-22T12:30:00|2026-11-22T12:31:00|Unknown|Unknown|PENDING|"
        "gres/gpu=8||None assigned",
        "300_[1-2]|300|gpu|acct|bob|2026-11-22T13:00:00|2026-11-22T13:00:00|Unknown|Unknown|"
        "PENDING|gres/gpu=1||None assigned",
    )
    conversion = convert("slurm", [sacct], "--as-of", "2026-11-23T00:00:05Z")
    assert (conversion.read, conversion.converted) == (3, 3)
    submitted = {
        e["job_id"]: (e["ts"], e["chips_requested"], e["chip_generation"])
        for e in records(conversion, "scheduler")
        if e["type"] == "JOB_SUBMIT"
    }
    assert submitted == {
        "200": ("2026-11-22T12:00:00Z", 2, "gpu-unknown"),
        "201": ("2026-11-22T12:31:00Z", 8, "gpu-unknown"),
        "300_1": ("2026-11-22T13:00:00Z", 1, "gpu-unknown"),
        "300_2": ("2026-11-22T13:00:00Z", 1, "gpu-unknown"),
    }
    others = [(e["job_id"], e["type"], e["ts"]) for e in records(conversion, "scheduler")]
    assert [e for e in others if e[1] != "JOB_SUBMIT"] == [
        ("200", "TASK_SCHEDULE", "2026-11-22T12:10:00Z")
    ]
    assert records(conversion, "runtime") == [
        {"job_id": "200", "attempt": 0, "kind": "step", "start": "2026-11-22T12:10:00Z",
         "end": "2026-11-23T00:00:05Z", "step": 0},
    ]  # fmt: skip


def test_states_give_the_release_and_the_jobs_end(tmp_path: Path) -> None:
    """A time-out fails (TASK_FAIL, FAILED), a node failure loses the task (TASK_LOST, FAILED),
    a cancellation `CANCELLED by 0` evicts it (TASK_EVICT, CANCELLED)."""
    rows = [
        f"{job}|{job}|gpu|acct|carol|2026-11-22T08:00:00|2026-11-22T08:00:00|"
        f"2026-11-22T08:00:10|2026-11-22T09:00:00|{state}|gres/gpu=1|gres/gpu=1|n1"
        for job, state in (("401", "TIMEOUT"), ("402", "NODE_FAIL"), ("403", "CANCELLED by 0"))
    ]
    conversion = convert("slurm", [_sacct(tmp_path / "sacct-3.txt", *rows)])
    ended = [
        (e["job_id"], e["type"], e.get("state"))
        for e in records(conversion, "scheduler")
        if e["ts"] == "2026-11-22T09:00:00Z"
    ]
    assert sorted(ended) == [
        ("401", "JOB_END", "FAILED"),
        ("401", "TASK_FAIL", None),
        ("402", "JOB_END", "FAILED"),
        ("402", "TASK_LOST", None),
        ("403", "JOB_END", "CANCELLED"),
        ("403", "TASK_EVICT", None),
    ]


def test_each_unusable_row_is_quarantined_with_its_reason(tmp_path: Path) -> None:
    """`line` is the row's line in its file (the header is line 1); a quarantined row of a job
    quarantines its other rows."""
    ok = "2026-11-22T08:00:00|2026-11-22T08:00:00|2026-11-22T08:01:00|2026-11-22T09:00:00"
    sacct = _sacct(
        tmp_path / "sacct-4.txt",
        f"500|500|gpu|acct|dan|{ok}|COMPLETED|gres/gpu=1|gres/gpu=1|n1",
        f"501|501|cpu|acct|dan|{ok}|COMPLETED|cpu=1|cpu=1|n1",
        f"502|502|gpu|acct|dan|{ok}|EXPLODED|gres/gpu=1|gres/gpu=1|n1",
        "503|503|gpu|acct|dan",
        f"504|504|gpu|acct|dan|2026-11-22 08:00|{ok[20:]}|COMPLETED|gres/gpu=1|gres/gpu=1|n1",
        f"505|505|gpu|acct|dan|{ok}|REQUEUED|gres/gpu=1|gres/gpu=1|n1",
        f"505|505|gpu|acct|dan|{ok}|COMPLETED|gres/gpu=x|gres/gpu=1|n1",
    )
    conversion = convert("slurm", [sacct])
    assert (conversion.read, conversion.converted) == (7, 1)
    assert quarantined(conversion) == [
        ("sacct-4.txt", 3, "no GPU: no gres/gpu in ReqTRES or AllocTRES"),
        ("sacct-4.txt", 4, "unknown state"),
        ("sacct-4.txt", 5, "malformed line: wrong number of fields"),
        ("sacct-4.txt", 6, "unparseable time: Submit"),
        ("sacct-4.txt", 7, "another row of its job is quarantined"),
        ("sacct-4.txt", 8, "bad TRES: ReqTRES"),
    ]
    assert {e["job_id"] for e in records(conversion, "scheduler")} == {"500"}
