"""`mpg import kubernetes`: Kueue Workloads, their pods and events, and JobSet restarts, through
`mpg import` and `mpg run`, checked against timelines written here by hand from the scenarios
(tests/fixtures/adapters/kubernetes/README.md), not through the adapter's code.

The independent route: each job's named timeline (submission, end, the chips it held and when,
its attempts) in plain datetimes; each interval cut at UTC midnights; wanted runs from
submission to the end (to the export's 16:00 for a job still open), all-allocated is the time it
held at least the chips it requested (its pods bound and not yet stopped, from the scenario's
pods; Kueue's admission where the export shows none), productive is its last attempt's share of
that when it finished or is still open (cluster adapters: one `step` span per attempt, no
checkpoints). The day is imported at once and in two batches (noon's exports, then 16:00's):
both must write the same records.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from mpg.adapters import kubernetes_json
from mpg.cli import main
from tests.support.adapters import make_kubernetes_fixtures as fx
from tests.support.files import adapter_fixtures

FIXTURES = adapter_fixtures("kubernetes")
AS_OF = "2026-11-20T16:00:00Z"
OWNER = ("--owner-label", "ml.example.com/owner")


def t(text: str) -> datetime:
    """`DD HH:MM:SS[.ffffff]` of November 2026, UTC."""
    return datetime.strptime(
        f"2026-11-{text}", "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S"
    ).replace(tzinfo=UTC)


@dataclass(frozen=True)
class Timeline:
    """One job as the scenario describes it: `holds` are the stretches in which it held a
    given number of chips (the sum over its bound, running pods; where the export shows no pods
    of an admission, the admission's)."""

    chips: int
    submitted: datetime
    end: datetime | None  # None: still running at the export
    state: str | None
    holds: list[tuple[datetime, datetime, int]] = field(default_factory=list)
    attempts: list[tuple[datetime, datetime]] = field(default_factory=list)
    owner: str | None = None


OPEN_UNTIL = t("20 16:00:00")
TIMELINES = {
    # Queued 90 min for TPU v5p quota, admitted 09:30; its 4 pods were bound 17 to 58 s later
    # (PodScheduled 09:30:17, :21, :33, :58) and ended 13:29:55 and :56. Its owner is named on
    # its JobSet.
    "team-lm/jobset-llama-pretrain-5f2c1": Timeline(
        16, t("20 08:00:00"), t("20 13:30:00"), "FINISHED",
        [(t("20 09:30:17"), t("20 09:30:58"), 12), (t("20 09:30:58"), t("20 13:29:55"), 16)],
        [(t("20 09:30:00"), t("20 13:30:00"))],
        owner="alice",
    ),
    # Admitted at 10:00:05.25 (only its event says so); its pods, known only from events, were
    # bound 10:00:22.3 and 10:00:31.7 and stopped 11:00:01 (Killing) after the 11:00 preemption;
    # admitted again at 12:30, its new pods bound 12:30:18 and :26, done 13:59:57 and :58.
    "team-nlp/jobset-bert-finetune-8d41e": Timeline(
        16, t("20 10:00:00"), t("20 14:00:00"), "FINISHED",
        [(t("20 10:00:31.7"), t("20 11:00:01"), 16), (t("20 12:30:26"), t("20 13:59:57"), 16)],
        [(t("20 10:00:05.25"), t("20 11:00:00")), (t("20 12:30:00"), t("20 14:00:00"))],
        owner="bob",
    ),
    # No pods of it in the exports: Kueue's admission decides.
    "team-safety/jobset-urgent-eval-c07b2": Timeline(
        16, t("20 10:59:55"), t("20 12:29:30"), "FINISHED",
        [(t("20 11:00:45"), t("20 12:29:30"), 16)],
        [(t("20 11:00:45"), t("20 12:29:30"))],
    ),
    # Admitted 22:05:00.5 and lost a node at 01:17:30.25 (both only in events; its pods, on the
    # 19th, are in no export: the admission decides); admitted again at 01:40, its 8 pods bound
    # by 01:41:00, done 04:59:55. Two attempts, the first lost.
    "team-lm/jobset-mixtral-moe-41d9a": Timeline(
        32, t("19 22:00:00"), t("20 05:00:00"), "FINISHED",
        [(t("19 22:05:00.5"), t("20 01:17:30.25"), 32), (t("20 01:41:00"), t("20 04:59:55"), 32)],
        [(t("19 22:05:00.5"), t("20 01:17:30.25")), (t("20 01:40:00"), t("20 05:00:00"))],
    ),
    # One admission, three attempts split by the JobSet's restarts; each incarnation's 4 GPU
    # pods all bound at 06:00:40.4, 07:10:50.5 (events) and 08:20:44 (PodScheduled), stopped at
    # 07:10:01 and 08:20:01 (Killing), done 09:59:58. The CPU driver holds no accelerator.
    "team-nlp/jobset-gemma-sft-9e3f0": Timeline(
        32, t("20 05:50:00"), t("20 10:00:00"), "FINISHED",
        [
            (t("20 06:00:40.4"), t("20 07:10:01"), 32),
            (t("20 07:10:50.5"), t("20 08:20:01"), 32),
            (t("20 08:20:44"), t("20 09:59:58"), 32),
        ],
        [
            (t("20 06:00:00"), t("20 07:10:00.15")),
            (t("20 07:10:00.15"), t("20 08:20:00.15")),
            (t("20 08:20:00.15"), t("20 10:00:00")),
        ],
    ),
    # Partially admitted: 4 of 8 pods (32 of 64 GPUs) is never all the chips it asked for.
    "team-rec/job-sweep-shard-1a2b3": Timeline(
        64, t("20 08:45:00"), t("20 12:40:00"), "FINISHED",
        [(t("20 09:00:31"), t("20 12:39:58"), 32)],
        [(t("20 09:00:00"), t("20 12:40:00"))],
    ),
    # Refused (even minCount does not fit), then deactivated: wanted, never allocated.
    "team-rec/job-grid-search-77c4e": Timeline(64, t("20 12:10:00"), t("20 15:00:00"), "CANCELLED"),
    "team-vision/jobset-vit-pretrain-2b6d8": Timeline(
        8, t("20 14:00:00"), None, None,
        [(t("20 14:00:24"), OPEN_UNTIL, 8)],
        [(t("20 14:00:03"), OPEN_UNTIL)],
    ),
    # Admitted 10:20:00.1; 3 of its 4 pods bound by 10:20:30.4, the fourth never (a tainted
    # node), so 24 of 32 GPUs until Kueue's PodsReadyTimeout eviction (10:30:00.2: events only)
    # stopped them at 10:30:01; admitted again 10:41, all 4 bound at 10:41:41, done 11:54:58.
    "team-vision/jobset-detr-train-6c0d2": Timeline(
        32, t("20 10:15:00"), t("20 11:55:00"), "FINISHED",
        [(t("20 10:20:30.4"), t("20 10:30:01"), 24), (t("20 10:41:41"), t("20 11:54:58"), 32)],
        [(t("20 10:20:00.1"), t("20 10:30:00.2")), (t("20 10:41:00"), t("20 11:55:00"))],
    ),
    # Admitted 13:00, all 8 pods bound at 13:00:44.9 (events); a node lost at 14:10:03 (the
    # pod's NodeNotReady) leaves 56 GPUs until the JobSet's restart (14:15:05.3) stops the rest
    # at 14:15:06; the new pods are all bound at 14:19:31 (the last waited for a new node), done
    # 15:39:57. Kueue's admission held throughout. Its owner is named on its pods.
    "team-lm/jobset-t5-xxl-3e7a9": Timeline(
        64, t("20 12:50:00"), t("20 15:40:00"), "FINISHED",
        [
            (t("20 13:00:44.9"), t("20 14:10:03"), 64),
            (t("20 14:10:03"), t("20 14:15:06"), 56),
            (t("20 14:19:31"), t("20 15:39:57"), 64),
        ],
        [(t("20 13:00:00"), t("20 14:15:05.3")), (t("20 14:15:05.3"), t("20 15:40:00"))],
        owner="carol",
    ),
}  # fmt: skip


def by_day(start: datetime, end: datetime, chips: int) -> dict[date, float]:
    """Chip-seconds of [start, end) per UTC day."""
    out: dict[date, float] = defaultdict(float)
    while start < end:
        cut = min(end, datetime.combine(start.date() + timedelta(days=1), time(), tzinfo=UTC))
        out[start.date()] += (cut - start).total_seconds() * chips
        start = cut
    return out


def expected_job_days() -> dict[tuple[str, date], tuple[float, float, float]]:
    """(wanted, all-allocated, productive) chip-seconds per job and day, from TIMELINES."""
    out = {}
    for job, line in TIMELINES.items():
        wanted = by_day(line.submitted, line.end or OPEN_UNTIL, line.chips)
        full = [(a, b) for a, b, held in line.holds if held >= line.chips]
        allocated = [by_day(a, b, line.chips) for a, b in full]
        kept = line.state in (None, "FINISHED") and line.attempts
        last = line.attempts[-1] if kept else None
        productive = [by_day(max(a, last[0]), min(b, last[1]), line.chips) for a, b in full if last]
        for day, w in wanted.items():
            out[job, day] = (
                w,
                sum(d.get(day, 0.0) for d in allocated),
                sum(d.get(day, 0.0) for d in productive),
            )
    return out


def import_into(root: Path, *args: str) -> str:
    """`mpg import kubernetes ARGS --out ROOT --owner-label ...`; what it printed."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["import", "kubernetes", *args, "--out", str(root), *OWNER]) == 0
    return buffer.getvalue()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """Every fixture file imported together (the export taken at 16:00), then `mpg run`."""
    tmp = tmp_path_factory.mktemp("kubernetes")
    root, out = tmp / "traces", tmp / "out"
    summary = import_into(root, str(FIXTURES), "--as-of", AS_OF)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", "--traces", str(root), "--out", str(out)]) == 0
    return root, out, summary


def test_goodput_per_job_day_matches_the_timelines(published: tuple[Path, Path, str]) -> None:
    _, out, _ = published
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, day, wanted_chip_s, all_allocated_chip_s, productive_chip_s, sg, rg "
            "from job_day_goodput where metric_version = 'v1'"
        ).fetchall()
    expected = expected_job_days()
    assert {(r[0], r[1]) for r in rows} == set(expected)
    for job, day, wanted, allocated, productive, sg, rg in rows:
        want = expected[job, day]
        assert (wanted, allocated, productive) == pytest.approx(want, rel=1e-12), (job, day)
        assert sg == pytest.approx(want[1] / want[0], rel=1e-12), (job, day)
        assert rg == (pytest.approx(want[2] / want[1], rel=1e-12) if want[1] else None), (job, day)


def test_the_issues_cases_by_hand(published: tuple[Path, Path, str]) -> None:
    """t5-xxl wants 64 GPUs 12:50-15:40 (10,200 s); its pods held them all 13:00:44.9-14:10:03
    (4,158.1 s) and 14:19:31-15:39:57 (4,826 s): SG = 8,984.1 / 10,200 (Kueue's admission,
    13:00-15:40, said 9,600 / 10,200), and only the restarted attempt's 4,826 s are kept: RG =
    4,826 / 8,984.1. detr-train wants 32 GPUs 10:15-11:55 (6,000 s) and held them all only
    10:41:41-11:54:58 (4,397 s; the admission said 10:20-10:30 too): SG = 4,397 / 6,000, RG 1."""
    _, out, _ = published
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select job_id, wanted_chip_s, all_allocated_chip_s, productive_chip_s, sg, rg "
            "from job_day_goodput where metric_version = 'v1' and job_id in ($1, $2) "
            "order by job_id",
            params=["team-lm/jobset-t5-xxl-3e7a9", "team-vision/jobset-detr-train-6c0d2"],
        ).fetchall()
    assert rows == [
        (
            "team-lm/jobset-t5-xxl-3e7a9",
            652800.0,
            pytest.approx(574982.4, rel=1e-12),
            308864.0,
            pytest.approx(8984.1 / 10200, rel=1e-12),
            pytest.approx(4826 / 8984.1, rel=1e-12),
        ),
        (
            "team-vision/jobset-detr-train-6c0d2",
            192000.0,
            140704.0,
            140704.0,
            pytest.approx(4397 / 6000, rel=1e-12),
            1.0,
        ),
    ]


# Who pays (the namespace), where it waited (the LocalQueue), who asked (--owner-label) and what
# decided when its chips were held: pods, Kueue's admission (no pods shown), or both.
ATTRIBUTES = {
    "team-lm/jobset-llama-pretrain-5f2c1": ("alice", "team-lm", "lm-queue", "pods"),
    "team-nlp/jobset-bert-finetune-8d41e": ("bob", "team-nlp", "nlp-queue", "pods"),
    "team-safety/jobset-urgent-eval-c07b2": (None, "team-safety", "safety-queue", "admission"),
    "team-lm/jobset-mixtral-moe-41d9a": (None, "team-lm", "lm-queue", "pods+admission"),
    "team-nlp/jobset-gemma-sft-9e3f0": (None, "team-nlp", "nlp-queue", "pods"),
    "team-rec/job-sweep-shard-1a2b3": (None, "team-rec", "rec-queue", "pods"),
    "team-rec/job-grid-search-77c4e": (None, "team-rec", "rec-queue", "admission"),
    "team-vision/jobset-vit-pretrain-2b6d8": (None, "team-vision", "vision-queue", "pods"),
    "team-vision/jobset-detr-train-6c0d2": (None, "team-vision", "vision-queue", "pods"),
    "team-lm/jobset-t5-xxl-3e7a9": ("carol", "team-lm", "lm-queue", "pods"),
}


def test_the_jobs_rows_say_who_where_and_from_what(published: tuple[Path, Path, str]) -> None:
    """Every job-day of a job carries its owner, team, queue and `allocated_from`."""
    _, out, _ = published
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        rows = db.sql(
            "select distinct job_id, owner, team, queue, allocated_from from job_day_goodput"
        ).fetchall()
    assert {job: tuple(rest) for job, *rest in rows} == ATTRIBUTES
    assert len(rows) == len(ATTRIBUTES)


def lines(root: Path, source: str) -> dict[str, list[dict[str, Any]]]:
    """The canonical records written under `root/source`, per job."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in sorted((root / source).glob("*.jsonl")):
        for line in f.read_text().splitlines():
            record = json.loads(line)
            out[record.pop("job_id")].append(record)
    return dict(out)


def brief(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(type, ts, task, chips or state) of each scheduler event, in the file's order."""
    return [
        (e["type"], e["ts"], e.get("task_index"), e.get("chips", e.get("state"))) for e in events
    ]


def at20(clock: str) -> str:
    return f"2026-11-20T{clock}Z"


def test_scheduler_events(published: tuple[Path, Path, str]) -> None:
    """The JOB_SUBMIT of every job; every event of four. A pod shown is a task of its own
    (numbered after the pod sets), given its chips when bound (PodScheduled's time, else the
    Scheduled event's) and released when it ended: TASK_FINISH when its containers completed,
    TASK_EVICT when stopped, TASK_LOST from its node's NodeNotReady. Where no pod of an
    admission is shown, its pod set (task 0) holds count x per pod from the admission, as
    before: a condition's time wins over its own event's; an eviction for a failed node is
    TASK_LOST."""
    root, _, _ = published
    events = lines(root, "scheduler")
    submits = {job: e[0] for job, e in events.items()}
    assert submits["team-lm/jobset-llama-pretrain-5f2c1"] == {
        "type": "JOB_SUBMIT",
        "ts": "2026-11-20T08:00:00Z",
        "chips_requested": 16,
        "chip_generation": "tpu-v5p",
        "workload_class": "training",
        "framework": "other",
        "priority": 500,
        "owner": "alice",
        "team": "team-lm",
        "queue": "lm-queue",
        "topology": "2x2x4",
        "allocated_from": "pods",
    }
    assert {job: (s["chips_requested"], s["chip_generation"]) for job, s in submits.items()} == {
        "team-lm/jobset-llama-pretrain-5f2c1": (16, "tpu-v5p"),
        "team-nlp/jobset-bert-finetune-8d41e": (16, "gpu-h100"),
        "team-safety/jobset-urgent-eval-c07b2": (16, "gpu-h100"),
        "team-lm/jobset-mixtral-moe-41d9a": (32, "tpu-v5p"),
        "team-nlp/jobset-gemma-sft-9e3f0": (32, "gpu-h200"),
        "team-rec/job-sweep-shard-1a2b3": (64, "gpu-h100"),
        "team-rec/job-grid-search-77c4e": (64, "gpu-h100"),
        "team-vision/jobset-vit-pretrain-2b6d8": (8, "tpu-v6e"),
        "team-vision/jobset-detr-train-6c0d2": (32, "gpu-h100"),
        "team-lm/jobset-t5-xxl-3e7a9": (64, "gpu-h100"),
    }
    rest = {job: brief(e[1:]) for job, e in events.items()}
    mixtral_pods = ["01:40:19", "01:40:22", "01:40:25", "01:40:31", "01:40:37", "01:40:44"]
    assert rest["team-lm/jobset-mixtral-moe-41d9a"] == [
        ("TASK_SCHEDULE", "2026-11-19T22:05:00.500000Z", 0, 32),
        ("TASK_LOST", at20("01:17:30.250000"), 0, None),
        *[("TASK_SCHEDULE", at20(c), n, 4) for n, c in enumerate(mixtral_pods, start=1)],
        ("TASK_SCHEDULE", at20("01:40:52"), 7, 4),
        ("TASK_SCHEDULE", at20("01:41:00"), 8, 4),
        *[("TASK_FINISH", at20("04:59:55"), n, None) for n in range(1, 9)],
        ("JOB_END", at20("05:00:00"), None, "FINISHED"),
    ]
    assert rest["team-vision/jobset-detr-train-6c0d2"] == [
        ("TASK_SCHEDULE", at20("10:20:18.200000"), 1, 8),
        ("TASK_SCHEDULE", at20("10:20:22.900000"), 2, 8),
        ("TASK_SCHEDULE", at20("10:20:30.400000"), 3, 8),
        *[("TASK_EVICT", at20("10:30:01"), n, None) for n in (1, 2, 3)],
        ("TASK_SCHEDULE", at20("10:41:19"), 4, 8),
        ("TASK_SCHEDULE", at20("10:41:23"), 5, 8),
        ("TASK_SCHEDULE", at20("10:41:27"), 6, 8),
        ("TASK_SCHEDULE", at20("10:41:41"), 7, 8),
        *[("TASK_FINISH", at20("11:54:58"), n, None) for n in (4, 5, 6, 7)],
        ("JOB_END", at20("11:55:00"), None, "FINISHED"),
    ]
    first = ["13:00:17.1", "13:00:20.4", "13:00:23.8", "13:00:27.2", "13:00:31.5", "13:00:35.9"]
    second = ["14:15:26", "14:15:30", "14:15:34", "14:15:38", "14:15:42", "14:15:47"]
    assert rest["team-lm/jobset-t5-xxl-3e7a9"] == [
        *[("TASK_SCHEDULE", at20(c + "00000"), n, 8) for n, c in enumerate(first, start=1)],
        ("TASK_SCHEDULE", at20("13:00:40.300000"), 7, 8),
        ("TASK_SCHEDULE", at20("13:00:44.900000"), 8, 8),
        ("TASK_LOST", at20("14:10:03"), 6, None),
        *[("TASK_EVICT", at20("14:15:06"), n, None) for n in (1, 2, 3, 4, 5, 7, 8)],
        *[("TASK_SCHEDULE", at20(c), n, 8) for n, c in enumerate(second, start=9)],
        ("TASK_SCHEDULE", at20("14:15:55"), 15, 8),
        ("TASK_SCHEDULE", at20("14:19:31"), 16, 8),
        *[("TASK_FINISH", at20("15:39:57"), n, None) for n in range(9, 17)],
        ("JOB_END", at20("15:40:00"), None, "FINISHED"),
    ]
    assert rest["team-safety/jobset-urgent-eval-c07b2"] == [
        ("TASK_SCHEDULE", at20("11:00:45"), 0, 16),
        ("JOB_END", at20("12:29:30"), None, "FINISHED"),
    ]
    assert rest["team-rec/job-grid-search-77c4e"] == [
        ("JOB_END", at20("15:00:00"), None, "CANCELLED")
    ]


def test_one_span_per_attempt(published: tuple[Path, Path, str]) -> None:
    """Each admission, and each JobSet restart within one, is an attempt: one `step` span."""
    root, _, _ = published
    spans = {
        job: [(s["attempt"], s["kind"], s["start"], s["end"], s["step"]) for s in found]
        for job, found in lines(root, "runtime").items()
    }
    iso = "%Y-%m-%dT%H:%M:%S"

    def text(moment: datetime) -> str:
        fraction = f".{moment.microsecond:06d}" if moment.microsecond else ""
        return moment.strftime(iso) + fraction + "Z"

    assert spans == {
        job: [(n, "step", text(a), text(b), 0) for n, (a, b) in enumerate(line.attempts)]
        for job, line in TIMELINES.items()
        if line.attempts
    }


def test_two_batches_write_what_one_does(published: tuple[Path, Path, str], tmp_path: Path) -> None:
    """Noon's exports imported at noon, then 16:00's (and the hostile files): the second
    batch's Workloads carry evictions and restarts whose events were in the first (bert's
    schedulingStats counts the 11:00 preemption; gemma's JobSet its two restarts), which the
    import's state under the root supplies. Every record, quarantine row and the import's
    notes' totals equal those of importing all at once."""
    root, _, _ = published
    split = tmp_path / "traces"
    import_into(split, str(FIXTURES / "day-1200"), "--as-of", "2026-11-20T12:00:00Z")
    second = import_into(
        split, str(FIXTURES / "day-1600"), str(FIXTURES / "hostile"), "--as-of", AS_OF
    )
    assert "211 records read = 185 converted + 17 quarantined + 9 ignored" in second
    for source in ("scheduler", "runtime"):
        assert lines(split, source) == lines(root, source)
    rows = {
        folder: sorted(f.read_text() for f in (folder / "quarantine").glob("*.jsonl"))
        for folder in (root, split)
    }
    assert rows[split] == rows[root]


NOT_CONVERTED = "its Workload was not converted"
L4 = "unknown accelerator: cloud.google.com/gke-accelerator=nvidia-l4"
# Quarantined records per file (relative to FIXTURES) and line, and why.
QUARANTINED = {
    ("hostile/exporter.jsonl", 1): "malformed JSON",
    ("hostile/exporter.jsonl", 3): "no Workload in the input for this event",
    ("hostile/exporter.jsonl", 4): "not a JSON object",
    ("hostile/exporter.jsonl", 5): "not a Kubernetes object: no kind",
    ("hostile/exporter.jsonl", 6): "missing field: reason",
    ("hostile/exporter.jsonl", 7): NOT_CONVERTED,
    ("hostile/exporter.jsonl", 8): NOT_CONVERTED,
    ("hostile/objects.json", 1): "unknown kind: ConfigMap",
    ("hostile/objects.json", 2): "missing field: metadata.creationTimestamp",
    ("hostile/objects.json", 3): f"{L4} (map it: --accelerator nvidia-l4=ID)",
    ("hostile/objects.json", 4): "no accelerator: no pod set requests google.com/tpu or "
    "nvidia.com/gpu",
    ("hostile/objects.json", 5): "no accelerator type: no node selector or flavor names it "
    "(--chip-generation)",
    ("hostile/objects.json", 6): "history incomplete: status.schedulingStats counts 2 evictions, "
    "the input shows 0",
    ("hostile/objects.json", 7): "unknown Finished reason: Bogus",
    ("hostile/objects.json", 9): "unparseable time: metadata.creationTimestamp",
    ("hostile/objects.json", 10): "invalid field: spec.podSets[0].count",
    ("hostile/objects.json", 11): "history incomplete: evicted before any admission the input "
    "shows",
}


def test_import_counts_and_quarantine(published: tuple[Path, Path, str]) -> None:
    """478 records: 17 Workload snapshots (7 at noon, 10 at 16:00), 64 pods (26 and 38, one of
    each not a Workload's: prometheus-0), 348 exporter lines and 4 kubectl events, 9 JobSets
    (notebook-scratch run without Kueue), 11 Jobs, 6 flavors, and the 19 hostile ones (11
    objects, 8 lines). Ignored, as about no job: the 2 prometheus pods, 4 pod events (its 2, a
    logging agent's, a web pod's), 2 node events, notebook-scratch and a Job of no JobSet."""
    root, out, summary = published
    assert "478 records read = 451 converted + 17 quarantined + 10 ignored" in summary
    ignored = summary[summary.index("ignored, ") :].splitlines()[1:]
    assert [line.split(None, 1) for line in ignored] == [
        ["4", "Pod events"],
        ["2", "Node events"],
        ["2", "Pods"],
        ["1", "JobSets"],
        ["1", "Jobs"],
    ]
    rows = [
        json.loads(line)
        for f in (root / "quarantine").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    found = {
        (Path(r["file"]).relative_to(FIXTURES).as_posix(), r["line"]): r["reason"] for r in rows
    }
    assert {k: v.split(":")[0] if v.startswith("malformed") else v for k, v in found.items()} == {
        k: v.split(":")[0] if v.startswith("malformed") else v for k, v in QUARANTINED.items()
    }
    assert found["hostile/exporter.jsonl", 1].startswith(
        "malformed JSON: Invalid control character"
    )
    config_map = next(r for r in rows if r["reason"] == "unknown kind: ConfigMap")
    assert json.loads(config_map["raw"])["kind"] == "ConfigMap"
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as db:
        counts = "select source = 'import', count(*) from quarantine group by all"
        assert db.sql(counts).fetchall() == [(True, len(rows))]


# ---------------------------------------------------------------------------------------------
# Each rule on a few objects of its own (built by the fixture script's API-faithful builders).

H100 = {fx.GPU_NODE: "nvidia-h100-80gb"}
NS, NAME = "team-t", "jobset-t-00001"
REF = fx.wl_ref(NS, NAME)


a_workload = fx.small_workload


def old_event(reason: str, first: str, last: str | None = None, count: int = 1) -> dict[str, Any]:
    """An event as the core/v1 recorder writes it (Kueue < 0.19): times to the second, and an
    aggregated `count` with its first and last occurrence."""
    return {
        "apiVersion": "v1",
        "count": count,
        "firstTimestamp": first,
        "involvedObject": {
            "apiVersion": fx.KUEUE_V1,
            "kind": "Workload",
            "name": NAME,
            "namespace": NS,
            "uid": fx.uid(NAME),
        },
        "kind": "Event",
        "lastTimestamp": last or first,
        "message": reason,
        "metadata": {"name": f"{NAME}.{reason}", "namespace": NS, "uid": fx.uid(reason + first)},
        "reason": reason,
        "source": {"component": "kueue-admission"},
        "type": "Normal",
    }


def run_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], *options: str
) -> tuple[int, str, str, Path]:
    """Write `files` (name: text) into a folder and import it; (code, stdout, stderr, root)."""
    src = tmp_path / "src"
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).write_text(text)
    root = tmp_path / "root"
    code = main(["import", "kubernetes", str(src), "--out", str(root), *options])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, root


def quarantined(root: Path) -> list[str]:
    return [
        json.loads(line)["reason"]
        for f in (root / "quarantine").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]


def test_aggregated_events_of_the_older_recorder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An `Admitted` event of count 2 knows both its occurrences (first and last timestamp):
    admitted 09:10, evicted 10:00, admitted again 11:00 (also the condition, which wins)."""
    workload = a_workload(
        [*fx.admitted(fx.at(20, "11:00:00"), "q"), fx.finished(fx.at(20, "12:00:00"))]
    )
    events = [
        old_event("Admitted", fx.at(20, "09:10:00"), fx.at(20, "11:00:01"), count=2),
        old_event("EvictedDueToPreempted", fx.at(20, "10:00:00")),
    ]
    code, out, _, root = run_import(
        tmp_path, capsys, {"w.json": fx.kubectl_list([workload]), "e.json": fx.kubectl_list(events)}
    )
    assert code == 0 and "3 records read = 3 converted + 0 quarantined" in out
    assert brief(lines(root, "scheduler")[f"{NS}/{NAME}"][1:]) == [
        ("TASK_SCHEDULE", "2026-11-20T09:10:00Z", 0, 16),
        ("TASK_EVICT", "2026-11-20T10:00:00Z", 0, None),
        ("TASK_SCHEDULE", "2026-11-20T11:00:00Z", 0, 16),
        ("JOB_END", "2026-11-20T12:00:00Z", None, "FINISHED"),
    ]


def test_an_occurrence_without_a_time_quarantines_the_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Count 3 knows only the first and last of three admissions: the middle one, and so the
    eviction before it, cannot be placed, so the Workload is not accounted at all."""
    workload = a_workload(fx.admitted(fx.at(20, "12:00:00"), "q"))
    events = [old_event("Admitted", fx.at(20, "09:10:00"), fx.at(20, "12:00:00"), count=3)]
    code, out, _, root = run_import(
        tmp_path, capsys, {"w.json": fx.kubectl_list([workload]), "e.json": fx.kubectl_list(events)}
    )
    assert code == 0 and "2 records read = 0 converted + 2 quarantined" in out
    assert sorted(quarantined(root)) == [
        "history incomplete: an event counts 3 occurrences of Admitted, 2 with a time",
        "its Workload was not converted",
    ]


def test_an_exporters_versions_of_a_series_fill_it_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The events.k8s.io recorder patches a series as it grows; an exporter writes each version,
    so each occurrence is known: admitted 09:10, 10:10 and 11:10, evicted 09:40 and 10:40."""
    log = fx.Events()
    admit = log.add(REF, "Admitted", "Admitted by ClusterQueue q", fx.at(20, "09:10:00", 100000))
    evict = log.add(REF, "EvictedDueToPreempted", "Preempted", fx.at(20, "09:40:00", 100000))
    versions = [
        admit,
        evict,
        *fx.series_versions(admit, (2, fx.at(20, "10:10:00", 100000))),
        *fx.series_versions(evict, (2, fx.at(20, "10:40:00", 100000))),
        *fx.series_versions(admit, (3, fx.at(20, "11:10:00", 100000))),
    ]
    workload = a_workload(fx.admitted(fx.at(20, "11:10:00"), "q"), evictions=[("Preempted", 2)])
    exporter = "".join(json.dumps(v) + "\n" for v in versions)
    code, out, _, root = run_import(
        tmp_path,
        capsys,
        {"w.json": fx.kubectl_list([workload]), "x.jsonl": exporter},
        "--as-of",
        "2026-11-20T12:00:00Z",
    )
    assert code == 0 and "6 records read = 6 converted + 0 quarantined" in out
    assert brief(lines(root, "scheduler")[f"{NS}/{NAME}"][1:]) == [
        ("TASK_SCHEDULE", "2026-11-20T09:10:00.100000Z", 0, 16),
        ("TASK_EVICT", "2026-11-20T09:40:00.100000Z", 0, None),
        ("TASK_SCHEDULE", "2026-11-20T10:10:00.100000Z", 0, 16),
        ("TASK_EVICT", "2026-11-20T10:40:00.100000Z", 0, None),
        ("TASK_SCHEDULE", "2026-11-20T11:10:00Z", 0, 16),
    ]
    assert [s["end"] for s in lines(root, "runtime")[f"{NS}/{NAME}"]] == [
        "2026-11-20T09:40:00.100000Z",
        "2026-11-20T10:40:00.100000Z",
        "2026-11-20T12:00:00Z",
    ]


def jobset_files(
    restarts: int, events: list[dict[str, Any]], jobs: list[dict[str, Any]]
) -> dict[str, str]:
    workload = a_workload(
        [*fx.admitted(fx.at(20, "09:30:00"), "q"), fx.finished(fx.at(20, "12:00:00"))]
    )
    return {
        "w.json": fx.kubectl_list([workload]),
        "js.json": fx.kubectl_list(
            [fx.jobset_object(NS, "t", fx.at(20, "09:00:00"), restarts, fx.at(20, "12:00:00"))]
        ),
        "jobs.json": fx.kubectl_list(jobs),
        "e.json": fx.kubectl_list(events),
    }


def test_a_restart_known_only_from_its_jobs_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kubectl alone, hours later: the restart's event has expired, but the JobSet says it
    restarted once and its Jobs labelled restart-attempt 1 were created at 10:15:02."""
    jobs = [fx.child_job(NS, "t", "main", 0, 1, fx.at(20, "10:15:02"))]
    code, out, _, root = run_import(tmp_path, capsys, jobset_files(1, [], jobs))
    assert code == 0 and "3 records read = 3 converted + 0 quarantined" in out
    spans = [(s["attempt"], s["start"], s["end"]) for s in lines(root, "runtime")[f"{NS}/{NAME}"]]
    assert spans == [
        (0, "2026-11-20T09:30:00Z", "2026-11-20T10:15:02Z"),
        (1, "2026-11-20T10:15:02Z", "2026-11-20T12:00:00Z"),
    ]


def test_a_restart_with_no_time_is_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two restarts, one event (10:00) and the second restart's Jobs (11:00:04): events expire
    oldest first, so the event is taken as the second restart and the first has no time."""
    restart = fx.Events().add(
        fx.js_ref(NS, "t"),
        "RestartJobSetFailurePolicyAction",
        "restart",
        fx.at(20, "10:00:00", 1),
        component="jobset",
    )
    jobs = [fx.child_job(NS, "t", "main", 0, 2, fx.at(20, "11:00:04"))]
    code, out, _, root = run_import(tmp_path, capsys, jobset_files(2, [restart], jobs))
    assert code == 0 and "4 records read = 0 converted + 4 quarantined" in out
    assert sorted(quarantined(root)) == [
        "history incomplete: JobSet restart 1 has no time (no event, no labelled Job)",
        *["its Workload was not converted"] * 3,
    ]


def test_admitted_twice_with_no_eviction_between(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workload = a_workload(fx.admitted(fx.at(20, "11:00:00"), "q"))
    events = [old_event("Admitted", fx.at(20, "09:10:00"))]
    code, _, _, root = run_import(
        tmp_path, capsys, {"w.json": fx.kubectl_list([workload]), "e.json": fx.kubectl_list(events)}
    )
    assert code == 0
    assert "history incomplete: admitted again with no eviction between" in quarantined(root)


def test_how_a_workload_ends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kueue < 0.6 says `JobFinished` and only the message tells success from failure; a
    Workload deleted before it finished is CANCELLED at its deletionTimestamp."""
    ok, failed, deleted = (a_workload([]) for _ in range(3))
    for workload, name in ((ok, "a"), (failed, "b"), (deleted, "c")):
        workload["metadata"]["name"] = name
    ok["status"]["conditions"] = [
        fx.condition(
            "Finished", "True", "JobFinished", "Job finished successfully", fx.at(20, "10:00:00")
        )
    ]
    failed["status"]["conditions"] = [
        fx.condition(
            "Finished",
            "True",
            "JobFinished",
            "BackoffLimitExceeded: Job has reached the specified backoff limit",
            fx.at(20, "10:00:00"),
        )
    ]
    deleted["metadata"]["deletionTimestamp"] = fx.at(20, "10:30:00")
    code, _, _, root = run_import(
        tmp_path, capsys, {"w.json": fx.kubectl_list([ok, failed, deleted])}
    )
    assert code == 0
    ends = {
        job: (e[-1]["type"], e[-1]["ts"], e[-1]["state"])
        for job, e in lines(root, "scheduler").items()
    }
    assert ends == {
        f"{NS}/a": ("JOB_END", "2026-11-20T10:00:00Z", "FINISHED"),
        f"{NS}/b": ("JOB_END", "2026-11-20T10:00:00Z", "FAILED"),
        f"{NS}/c": ("JOB_END", "2026-11-20T10:30:00Z", "CANCELLED"),
    }  # fmt: skip


def test_accelerator_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--accelerator maps a value the table lacks (nvidia-l4), --chip-generation names the GPU
    of a pod set nothing names; a catalog id that does not exist is a one-line error."""
    hostile = {"objects.json": (FIXTURES / "hostile" / "objects.json").read_text()}
    options = ("--accelerator", "nvidia-l4=gpu-unknown", "--chip-generation", "gpu-a100")
    code, _, _, root = run_import(tmp_path, capsys, hostile, *options)
    assert code == 0
    submits = {job: e[0]["chip_generation"] for job, e in lines(root, "scheduler").items()}
    assert submits == {
        "team-x/jobset-l4-serve-00002": "gpu-unknown",
        "team-x/jobset-anygpu-00004": "gpu-a100",
        # Without the exporter's eviction event its history is whole.
        "team-x/jobset-early-evict-00009": "gpu-h100",
    }
    src, out = str(tmp_path / "src"), str(tmp_path / "x")
    code = main(["import", "kubernetes", src, "--out", out, "--accelerator", "nvidia-l4=gpu-l4"])
    assert code == 2
    assert "'gpu-l4' is not in the chip catalog" in capsys.readouterr().err


def test_other_shapes_of_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """gcloud's Cloud Logging export (a JSON array of entries whose `jsonPayload` is the event),
    and `kubectl get -w -o json` (documents one after another); --as-of left out, a running
    attempt ends at the latest time in the input (the PodsReady condition, 09:32)."""
    workload = a_workload(
        [
            *fx.admitted(fx.at(20, "09:30:00"), "q"),
            fx.condition("PodsReady", "True", "Started", "ok", fx.at(20, "09:32:00")),
        ]
    )
    entry = {
        "insertId": "1",
        "jsonPayload": old_event("Admitted", fx.at(20, "09:30:00")),
        "logName": "projects/p/logs/events",
    }
    watch = json.dumps(workload, indent=4) + "\n" + json.dumps(workload, indent=4) + "\n"
    code, out, _, root = run_import(
        tmp_path, capsys, {"w.json": watch, "logging.json": json.dumps([entry])}
    )
    assert code == 0 and "3 records read = 3 converted + 0 quarantined" in out
    spans = [(s["start"], s["end"]) for s in lines(root, "runtime")[f"{NS}/{NAME}"]]
    assert spans == [("2026-11-20T09:30:00Z", "2026-11-20T09:32:00Z")]
    code, _, _, root = run_import(tmp_path / "n", capsys, {"w.json": watch}, "--no-runtime")
    assert code == 0 and not (root / "runtime").exists()


def test_the_file_readers_docstring_example() -> None:
    assert doctest.testmod(kubernetes_json).failed == 0


def test_a_workload_created_again_under_one_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kueue deleted a Workload and created it again (same name, a new uid): one job id, so the
    later one is the job and the earlier is quarantined; an event naming the earlier's uid
    follows it there."""
    first, second = a_workload([]), a_workload(fx.admitted(fx.at(20, "10:00:00"), "q"))
    second["metadata"]["uid"] = fx.uid("again")
    second["metadata"]["creationTimestamp"] = fx.at(20, "09:30:00")
    early = old_event("Admitted", fx.at(20, "09:10:00"))
    files = {"w.json": fx.kubectl_list([first, second]), "e.json": fx.kubectl_list([early])}
    code, out, _, root = run_import(tmp_path, capsys, files)
    assert code == 0 and "3 records read = 1 converted + 2 quarantined" in out
    assert sorted(quarantined(root)) == [
        "its Workload was not converted",
        "replaced by a later Workload of the same name",
    ]
    assert brief(lines(root, "scheduler")[f"{NS}/{NAME}"]) == [
        ("JOB_SUBMIT", "2026-11-20T09:30:00Z", None, None),
        ("TASK_SCHEDULE", "2026-11-20T10:00:00Z", 0, 16),
    ]


def test_deactivation_by_kueue_before_0_10(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kueue 0.6 to 0.9 write a deactivation's Evicted reason as InactiveWorkload (followed by
    the DeactivationTarget's reason): admitted 09:10, deactivated at 10:30 after too many
    requeues, so the job ends then, CANCELLED (its end gives its chips back)."""
    evicted = fx.condition(
        "Evicted",
        "True",
        "InactiveWorkloadRequeuingLimitExceeded",
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries",
        fx.at(20, "10:30:00"),
    )
    workload = a_workload([*fx.admitted(fx.at(20, "09:10:00"), "q"), evicted], active=False)
    code, out, _, root = run_import(tmp_path, capsys, {"w.json": fx.kubectl_list([workload])})
    assert code == 0 and "1 records read = 1 converted + 0 quarantined" in out
    assert brief(lines(root, "scheduler")[f"{NS}/{NAME}"][1:]) == [
        ("TASK_SCHEDULE", "2026-11-20T09:10:00Z", 0, 16),
        ("JOB_END", "2026-11-20T10:30:00Z", None, "CANCELLED"),
    ]


def test_events_whose_counts_or_times_cannot_be_true(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A count below zero, and a last occurrence before the first, are quarantined, not
    trusted: the Workload is read from its condition (admitted 11:00) and the good event
    (evicted 10:00 after an admission at 09:10 that only the event knows)."""
    workload = a_workload(
        [*fx.admitted(fx.at(20, "11:00:00"), "q"), fx.finished(fx.at(20, "12:00:00"))],
        evictions=[("Preempted", 1)],
    )
    negative = old_event("Admitted", fx.at(20, "08:00:00"), fx.at(20, "11:00:01"), count=-2)
    reversed_ = old_event("EvictedDueToPreempted", fx.at(20, "10:50:00"), fx.at(20, "10:40:00"))
    reversed_["count"] = 2
    events = [
        negative,
        reversed_,
        old_event("Admitted", fx.at(20, "09:10:00")),
        old_event("EvictedDueToPreempted", fx.at(20, "10:00:00")),
    ]
    events[2]["metadata"]["uid"] = fx.uid("admitted once")
    files = {"w.json": fx.kubectl_list([workload]), "e.json": fx.kubectl_list(events)}
    code, out, _, root = run_import(tmp_path, capsys, files)
    assert code == 0 and "5 records read = 3 converted + 2 quarantined" in out
    assert sorted(quarantined(root)) == [
        "invalid event: its last occurrence is before its first",
        "invalid field: count is negative (-2)",
    ]
    assert brief(lines(root, "scheduler")[f"{NS}/{NAME}"][1:]) == [
        ("TASK_SCHEDULE", "2026-11-20T09:10:00Z", 0, 16),
        ("TASK_EVICT", "2026-11-20T10:00:00Z", 0, None),
        ("TASK_SCHEDULE", "2026-11-20T11:00:00Z", 0, 16),
        ("JOB_END", "2026-11-20T12:00:00Z", None, "FINISHED"),
    ]


def named(name: str, conditions: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    workload = a_workload(conditions, **kw)
    workload["metadata"] |= {"name": name, "uid": fx.uid(name)}
    return workload


def test_what_the_import_keeps_and_lets_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three imports into one root, days apart (--keep-days 2).
    1 (20th, 12:00): `done` finished at 11:00, `running` runs, `doubt` was admitted at 10:00; an
      event about a Workload of no input (quarantined), one about a pod of none (ignored).
    2 (23rd, 12:00): `done` again (Kueue keeps finished Workloads), `running` ended on the 22nd,
      `doubt` now counts 2 evictions that no input shows. `done` ended more than 2 days before
      the data's end: its records are final, and the import forgets what it read of it, as it
      does the old event of no Workload (its quarantine row stays) and the ignored pod event.
      `doubt` is quarantined now, so its files from import 1 are removed.
    3 (23rd, 13:00): `done` once more: ignored, its files untouched."""
    done = named(
        "done", [*fx.admitted(fx.at(20, "10:00:00"), "q"), fx.finished(fx.at(20, "11:00:00"))]
    )
    running = named("running", fx.admitted(fx.at(20, "09:30:00"), "q"))
    doubt = named("doubt", fx.admitted(fx.at(20, "10:00:00"), "q"))
    ghost = old_event("Admitted", fx.at(20, "11:40:00"))
    ghost["involvedObject"] |= {"name": "ghost", "uid": fx.uid("ghost")}
    web = fx.pod_event("web", "site-0", "Started", "Started container main", fx.at(20, "11:30:00"))
    first = {
        "w.json": fx.kubectl_list([done, running, doubt]),
        "e.json": fx.kubectl_list([ghost, web]),
    }
    code, out, _, root = run_import(tmp_path / "1", capsys, first, "--as-of", fx.at(20, "12:00:00"))
    assert code == 0 and "5 records read = 3 converted + 1 quarantined + 1 ignored" in out
    state = root / ".import" / "kubernetes"
    written = json.loads((state / "state.json").read_text())["written"]
    assert written == [f"{NS}/done", f"{NS}/doubt", f"{NS}/running"]
    kept = sorted(f.name for f in (root / "scheduler").glob("*.jsonl"))
    ended = named(
        "running", [*fx.admitted(fx.at(20, "09:30:00"), "q"), fx.finished(fx.at(22, "10:00:00"))]
    )
    doubted = named("doubt", fx.admitted(fx.at(20, "10:00:00"), "q"), evictions=[("Preempted", 2)])
    second = tmp_path / "2"
    second.mkdir()
    (second / "w.json").write_text(fx.kubectl_list([done, ended, doubted]))
    options = ("--out", str(root), "--keep-days", "2")
    assert (
        main(["import", "kubernetes", str(second), *options, "--as-of", fx.at(23, "12:00:00")]) == 0
    )
    out = capsys.readouterr().out
    assert "3 records read = 2 converted + 1 quarantined" in out
    assert sorted(f.name for f in (root / "scheduler").glob("*.jsonl")) == [
        n for n in kept if "doubt" not in n
    ]
    records = pl.read_parquet(state / "records.parquet")
    assert sorted(json.loads(r)["metadata"]["name"] for r in records["raw"]) == [
        "doubt", "doubt", "running", "running",
    ]  # fmt: skip
    assert pl.read_parquet(state / "sealed.parquet").rows() == [(NS, "done", fx.uid("done"))]
    incomplete = "history incomplete: status.schedulingStats counts 2 evictions, the input shows 0"
    assert sorted(quarantined(root)) == [  # doubt's two snapshots, the event of no Workload
        incomplete,
        incomplete,
        "no Workload in the input for this event",
    ]
    before = {f.name: f.read_text() for f in (root / "scheduler").glob("*.jsonl")}
    third = tmp_path / "3"
    third.mkdir()
    (third / "w.json").write_text(fx.kubectl_list([done]))
    assert (
        main(["import", "kubernetes", str(third), *options, "--as-of", fx.at(23, "13:00:00")]) == 0
    )
    out = capsys.readouterr().out
    assert "1 records read = 0 converted + 0 quarantined + 1 ignored" in out
    assert "records of Workloads an earlier import settled" in out
    assert {f.name: f.read_text() for f in (root / "scheduler").glob("*.jsonl")} == before
