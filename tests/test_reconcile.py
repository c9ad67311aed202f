"""Per-bucket checks: exact duplicates, unknown jobs, conflicting lifecycle events, buckets."""

from __future__ import annotations

import pyarrow as pa
import pytest

from mpg.transforms.reconcile import (
    CONFLICTING_END,
    CONFLICTING_SUBMIT,
    END_BEFORE_SUBMIT,
    UNKNOWN_JOB,
    bucket_of,
)
from tests.timeline import account, end, schedule, span, submit


def _reasons(a) -> list[tuple[str, str]]:
    return [(q["source"], q["reason"]) for q in a.records.quarantine.to_pylist()]


def _count(a, source: str) -> tuple[int, int, int]:
    (c,) = [c for c in a.records.counts if c.source == source]
    return c.accepted, c.duplicates, c.quarantined


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


@pytest.mark.parametrize("buckets", [1, 7, 64])
def test_buckets_are_stable_and_in_range(buckets: int) -> None:
    ids = pa.array(["train-a", "serve-b", "train-a", "é-unicode"])
    first = bucket_of(ids, buckets).to_pylist()
    assert first == bucket_of(ids, buckets).to_pylist()
    assert first[0] == first[2]
    assert all(0 <= b < buckets for b in first)


def test_bucket_is_crc32_of_the_job_id() -> None:
    # CRC-32 of b"train-a" is 0x790B8CF3 (as `crc32` from any standard library computes it).
    assert bucket_of(pa.array(["train-a"]), 1000).to_pylist() == [0x790B8CF3 % 1000]
