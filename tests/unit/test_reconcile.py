"""Per-job checks: exact duplicates, unknown jobs, conflicting lifecycle events; job buckets."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from mpg.transforms.reconcile import (
    CONFLICTING_END,
    CONFLICTING_SUBMIT,
    END_BEFORE_SUBMIT,
    UNKNOWN_JOB,
    bucket_of_hash,
    hash_range,
    job_hash_of,
)
from tests.support.timeline import account, at, end, schedule, span, submit


def _reasons(a) -> list[tuple[str, str]]:
    return [(q["source"], q["reason"]) for q in a.records.quarantine.to_pylist()]


def _count(a, source: str) -> tuple[int, int, int]:
    jobs = a.records.jobs
    return tuple(
        sum(jobs.column(f"{what}_{source}").to_pylist())
        for what in ("accepted", "duplicates", "quarantined")
    )


def test_exact_duplicates_count_once() -> None:
    s = [submit("j", "00:00", 1), schedule("j", "00:00", 0, 1), end("j", "00:10")]
    a = account(s + s[1:2], [span("j", "init", "00:00", "00:05")] * 3)
    assert _count(a, "scheduler") == (3, 1, 0)
    assert _count(a, "runtime") == (1, 2, 0)
    assert a.categories("j") == {"init": 300, "runtime_idle": 300}


def test_records_of_a_job_without_submit_are_quarantined_as_unknown_job() -> None:
    a = account(
        [submit("j", "00:00", 1), schedule("ghost", "00:00", 0, 1), end("ghost", "00:10")],
        [span("ghost", "init", "00:00", "00:05")] * 2,
    )
    assert sorted(_reasons(a)) == [
        ("runtime", UNKNOWN_JOB),
        ("scheduler", UNKNOWN_JOB),
        ("scheduler", UNKNOWN_JOB),
    ]
    # The duplicated span is a duplicate first, then one quarantined record.
    assert _count(a, "runtime") == (0, 1, 1)


def test_conflicting_lifecycle_events_keep_the_earliest() -> None:
    a = account(
        [
            submit("j", "00:00", 1),
            submit("j", "00:05", 2),
            schedule("j", "00:00", 0, 1),
            end("j", "00:10"),
            end("j", "00:20", "FAILED"),
        ]
    )
    assert sorted(_reasons(a)) == [
        ("scheduler", CONFLICTING_END),
        ("scheduler", CONFLICTING_SUBMIT),
    ]
    assert a.job_day("j")["wanted_chip_s"] == 600


def test_job_submits_that_differ_in_team_or_queue_only_conflict() -> None:
    """Who pays and where it waited are part of a job's request: the earliest JOB_SUBMIT's go
    onto its job-days; an exact copy is a duplicate."""
    first = {**submit("j", "00:00", 1), "owner": "ana", "team": "lm", "queue": "batch"}
    a = account(
        [
            first,
            first,
            {**first, "ts": at("00:01"), "team": "ads"},
            {**first, "ts": at("00:02"), "queue": "spot"},
            {**submit("k", "00:00", 1), "owner": "bo"},
            end("j", "00:10"),
            end("k", "00:10"),
        ]
    )
    assert _reasons(a) == [("scheduler", CONFLICTING_SUBMIT)] * 2
    assert _count(a, "scheduler") == (4, 1, 2)
    named = {r["job_id"]: (r["owner"], r["team"], r["queue"]) for r in a.job_days}
    assert named == {"j": ("ana", "lm", "batch"), "k": ("bo", None, None)}


def test_job_end_before_submit_is_quarantined_and_the_job_stays_open() -> None:
    a = account(
        [
            submit("j", "00:10", 1),
            end("j", "00:05"),
            schedule("j", "00:10", 0, 1),
            submit("k", "00:30", 1),
        ]
    )
    assert _reasons(a) == [("scheduler", END_BEFORE_SUBMIT)]
    assert a.job_day("j")["wanted_chip_s"] == 1200  # open: until the end of data at 00:30


def test_every_record_of_a_job_is_counted_on_that_job() -> None:
    a = account(
        [submit("j", "00:00", 1), schedule("ghost", "00:00", 0, 1), end("j", "00:10")],
        [span("j", "init", "00:00", "00:05")] * 2,
    )
    rows = {r["job_id"]: r for r in a.records.jobs.to_pylist()}
    assert (rows["j"]["rows_scheduler"], rows["j"]["accepted_scheduler"]) == (2, 2)
    assert (rows["j"]["rows_runtime"], rows["j"]["duplicates_runtime"]) == (2, 1)
    assert (rows["j"]["submitted"], rows["j"]["open"]) == (True, False)
    assert (rows["ghost"]["quarantined_scheduler"], rows["ghost"]["submitted"]) == (1, False)
    assert rows["ghost"]["data_end"] is None  # nothing of it was accepted
    assert [q["job_id"] for q in a.records.quarantine.to_pylist()] == ["ghost"]


def test_job_hash_is_crc32_of_the_job_id() -> None:
    # CRC-32 of b"train-a" is 0x790B8CF3 (as `crc32` from any standard library computes it).
    ids = pa.array(["train-a", "serve-b", "train-a", "é-unicode"])
    hashes = job_hash_of(ids).to_pylist()
    assert hashes[0] == hashes[2] == 0x790B8CF3
    assert all(0 <= h < 2**32 for h in hashes)


@pytest.mark.parametrize("buckets", [1, 7, 64, 1000])
def test_buckets_are_ranges_of_the_hash_that_cover_it_once(buckets: int) -> None:
    ranges = [hash_range(b, buckets) for b in range(buckets)]
    assert ranges[0][0] == 0 and ranges[-1][1] == 2**32
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    edges = np.array([h for low, high in ranges for h in (low, high - 1)])
    assert bucket_of_hash(edges, buckets).tolist() == [b for b in range(buckets) for _ in (0, 1)]
