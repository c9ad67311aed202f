"""The source expectation suites (`mpg.quality`): exact findings on hand-built buckets with planted
violations, clean real data, merging per-bucket parts as Beam may, and which engine runs them.
(The output suites on published tables: tests/e2e/test_quality.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from mpg.core.errors import OptionsError
from mpg.quality import BucketValidator, combine_results
from mpg.quality.declare import Expect
from mpg.quality.engine import engine_named
from mpg.schemas import RECORD_SCHEMAS, SOURCES
from mpg.transforms.reconcile import JobRecords
from tests.support.expectations import failed, findings
from tests.support.fleet import sample_fleet

T0 = datetime(2026, 11, 20, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def table(source: str, file: str, rows: list[tuple[int, dict]]) -> pa.Table:
    """A source's records from (line, fields) pairs; fields not given are NULL."""
    return pa.Table.from_pylist(
        [{**fields, "file": file, "line": line} for line, fields in rows],
        schema=RECORD_SCHEMAS[source],
    )


def submit(job: str, chips: int | None = 4, **fields: object) -> dict:
    return {
        "type": "JOB_SUBMIT",
        "ts": at(0),
        "job_id": job,
        "chips_requested": chips,
        "chip_generation": "tpu-v4",
        "workload_class": "training",
        "framework": "jax",
        **fields,
    }


def bucket(
    scheduler: pa.Table | None = None,
    runtime: pa.Table | None = None,
    profiles: pa.Table | None = None,
) -> JobRecords:
    """A job bucket; with no scheduler table, job j1 is submitted asking for 4 chips."""
    return JobRecords(
        scheduler=table("scheduler", "scheduler/s.jsonl", [(1, submit("j1"))])
        if scheduler is None
        else scheduler,
        runtime=RECORD_SCHEMAS["runtime"].empty_table() if runtime is None else runtime,
        profiles=RECORD_SCHEMAS["profiles"].empty_table() if profiles is None else profiles,
    )


@pytest.fixture(scope="module")
def validator() -> BucketValidator:
    return BucketValidator()


# -- source suites -----------------------------------------------------------------------------

PLANTED_SCHEDULER = [
    (0, submit("j3", framework=None)),  # line 0; framework missing
    (1, submit("j1")),
    (2, {"type": "TASK_SCHEDULE", "ts": at(1), "job_id": "j1", "task_index": 0, "chips": 8}),
    (3, {"type": "TASK_SCHEDULE", "ts": at(2), "job_id": "j1", "task_index": -1, "chips": 0}),
    (4, {"type": "TASK_SCHEDULE", "ts": at(3), "job_id": "j1", "task_index": 1}),  # no chips
    (5, submit("j1", 2, ts=at(5), chip_generation="tpu-v99")),  # a second JOB_SUBMIT
    (6, {"type": "JOB_END", "ts": at(-60), "job_id": "j1", "state": "EXPLODED"}),
    (7, {"type": "TASK_EVICT", "ts": at(10), "job_id": "j2", "task_index": 0}),  # unknown job
    (8, submit("", 0, workload_class="research")),
    (3, {"type": "TASK_FINISH", "ts": at(20), "job_id": "j1", "task_index": 0}),  # line 3 again
    (11, {"type": "JOB_PAUSE", "ts": at(30), "job_id": "j1"}),
]


def test_planted_scheduler_violations_are_counted_exactly(validator: BucketValidator) -> None:
    results = validator(bucket(table("scheduler", "scheduler/s.jsonl", PLANTED_SCHEDULER)))
    assert failed(results, "scheduler") == {
        "(file, line) is unique": (11, 2),
        "line >= 1": (11, 1),
        "job_id is not empty": (11, 1),
        "the record's job has a JOB_SUBMIT in its bucket": (11, 1),
        "type is one of the scheduler event types": (11, 1),
        "framework is not null where type in (JOB_SUBMIT)": (4, 1),
        "chips is not null where type in (TASK_SCHEDULE)": (3, 1),
        "chips_requested >= 1": (11, 1),
        "chips >= 1": (11, 1),
        "task_index >= 0": (11, 1),
        "chip_generation is one of the catalog v1's generations": (11, 1),
        "workload_class is one of the workload classes": (11, 1),
        "state is one of the job states": (11, 1),
        "a job has one JOB_SUBMIT and at most one JOB_END": (11, 2),
        "JOB_END is not before the job's JOB_SUBMIT": (11, 1),
        "a task's chips are within the job's request": (11, 1),
    }
    passed = findings(results, "scheduler")
    assert passed["task_index is not null where type in (TASK_SCHEDULE, TASK_EVICT, TASK_FAIL, "
                  "TASK_LOST, TASK_FINISH)"] == (True, 5, 0)  # fmt: skip
    assert passed["state is not null where type in (JOB_END)"] == (True, 1, 0)
    assert set(results.column("severity").to_pylist()) == {"warn"}


def test_a_sample_shows_the_first_unexpected_rows_with_their_provenance(
    validator: BucketValidator,
) -> None:
    results = validator(bucket(table("scheduler", "scheduler/s.jsonl", PLANTED_SCHEDULER)))
    samples = {r["description"]: r["unexpected_sample"] for r in results.to_pylist()}
    assert json.loads(samples["a task's chips are within the job's request"]) == [
        {"file": "scheduler/s.jsonl", "line": 2, "job_chips_requested": 4, "chips": 8}
    ]
    assert json.loads(samples["JOB_END is not before the job's JOB_SUBMIT"]) == [
        {
            "file": "scheduler/s.jsonl",
            "line": 6,
            "end_ts": "2026-11-19T23:00:00+00:00",
            "job_submit_ts": "2026-11-20T00:00:00+00:00",
        }
    ]
    assert json.loads(samples["chips is not null where type in (TASK_SCHEDULE)"]) == [
        {"file": "scheduler/s.jsonl", "line": 4, "chips": None}
    ]
    assert samples["type is string"] is None


def test_planted_runtime_violations_are_counted_exactly(validator: BucketValidator) -> None:
    span = {"job_id": "j1", "attempt": 0, "kind": "step", "start": at(0), "end": at(10), "step": 1}
    runtime = table(
        "runtime",
        "runtime/r.jsonl",
        [
            (1, span),
            (2, {**span, "attempt": -1, "kind": "init", "step": None}),
            (3, {**span, "kind": "nap", "step": None}),
            (4, {**span, "step": None}),
            (5, {**span, "kind": "checkpoint_save", "start": at(30), "end": at(25)}),
            (6, {**span, "job_id": "j9", "kind": "compile", "step": None}),
        ],
    )
    results = validator(bucket(runtime=runtime))
    assert failed(results, "runtime") == {
        "the record's job has a JOB_SUBMIT in its bucket": (6, 1),
        "kind is one of the span kinds": (6, 1),
        "step is not null where kind in (step, checkpoint_save, checkpoint_restore)": (3, 1),
        "attempt >= 0": (6, 1),
        "a span ends at or after its start": (6, 1),
    }
    assert not failed(results, "scheduler") and not failed(results, "profiles")


def test_planted_profile_violations_are_counted_exactly(validator: BucketValidator) -> None:
    good = {
        "job_id": "j1",
        "ts": at(0),
        "step": 1,
        "step_time_s": 1.0,
        "model_flops": 1e12,
        "chips": 4,
    }
    profiles = table(
        "profiles",
        "profiles/p.jsonl",
        [
            (1, good),
            (2, {**good, "step_time_s": 0.0}),
            (3, {**good, "model_flops": -1.0}),
            (4, {**good, "hbm_bytes": -5.0}),
            (5, {**good, "chips": 0}),
            (6, {**good, "chips": 8}),
            (7, {**good, "job_id": "j7", "chips": 2}),
        ],
    )
    assert failed(validator(bucket(profiles=profiles)), "profiles") == {
        "the record's job has a JOB_SUBMIT in its bucket": (7, 1),
        "step_time_s > 0": (7, 1),
        "model_flops >= 0": (7, 1),
        "hbm_bytes >= 0": (7, 1),
        "chips >= 1": (7, 1),
        "a profile's chips are within the job's request": (7, 1),
    }


def test_a_column_of_the_wrong_type_is_observed_not_counted(validator: BucketValidator) -> None:
    runtime = bucket().runtime
    wrong = runtime.set_column(1, pa.field("attempt", pa.int32()), runtime["attempt"].cast("int32"))
    row = next(r for r in validator(bucket(runtime=wrong)).to_pylist() if r["column"] == "attempt")
    assert (row["description"], row["success"], row["unexpected_count"], row["observed"]) == (
        "attempt is int64",
        False,
        None,
        "int32",
    )


def test_the_sample_fleet_meets_every_source_expectation(validator: BucketValidator) -> None:
    records = sample_fleet()
    results = validator(records)
    assert [r["description"] for r in results.to_pylist() if not r["success"]] == []
    rows = {r["target"]: r["element_count"] for r in results.to_pylist()}
    assert rows == {s: records.table(s).num_rows for s in SOURCES}
    assert validator(records).equals(results)  # the same input, the same results


def test_combining_parts_sums_counts_and_keeps_the_first_rows(validator: BucketValidator) -> None:
    span = {"job_id": "j1", "attempt": -1, "kind": "init", "start": at(0), "end": at(1)}
    part_a = validator(bucket(runtime=table("runtime", "runtime/r.jsonl", [(9, span)])))
    part_b = validator(
        bucket(runtime=table("runtime", "runtime/q.jsonl", [(n, span) for n in range(1, 8)]))
    )
    combined = combine_results([part_a, part_b])
    assert combined.num_rows == part_a.num_rows
    assert combined.column("description").to_pylist() == part_a.column("description").to_pylist()
    assert findings(combined, "runtime")["attempt >= 0"] == (False, 8, 8)
    assert findings(combined, "scheduler")["(file, line) is unique"] == (True, 2, 0)
    row = next(r for r in combined.to_pylist() if r["description"] == "attempt >= 0")
    assert [(s["file"], s["line"]) for s in json.loads(row["unexpected_sample"])] == [
        ("runtime/q.jsonl", n) for n in range(1, 6)
    ]
    assert [r["observed"] for r in combined.to_pylist() if r["description"] == "line is int64"] == [
        "int64"
    ] * 3
    assert combine_results([part_b, part_a]).equals(combined)


def test_combining_is_associative_so_beam_may_combine_in_any_grouping(
    validator: BucketValidator,
) -> None:
    runtime = bucket().runtime
    int32 = runtime.set_column(1, pa.field("attempt", pa.int32()), runtime["attempt"].cast("int32"))
    span = {"job_id": "j1", "attempt": -1, "kind": "init", "start": at(0), "end": at(1)}
    a, b, c = (
        validator(bucket(runtime=int32)),
        validator(bucket(runtime=table("runtime", "runtime/q.jsonl", [(1, span)]))),
        validator(bucket(runtime=table("runtime", "runtime/r.jsonl", [(1, span), (2, span)]))),
    )
    flat = combine_results([a, b, c])
    assert combine_results([combine_results([c, a]), b]).equals(flat)
    attempt_type = next(r for r in flat.to_pylist() if r["description"] == "attempt is int64")
    assert (attempt_type["success"], attempt_type["observed"]) == (False, "int32; int64")


def test_only_not_null_takes_a_row_condition() -> None:
    with pytest.raises(ValueError, match="only expect_column_values_to_not_be_null"):
        Expect("expect_column_values_to_be_between", {"column": "a"}, "a", when=("b", ("x",)))


def test_the_engine_is_named_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPG_EXPECTATIONS", raising=False)
    assert engine_named() == "mpg"
    monkeypatch.setenv("MPG_EXPECTATIONS", "great-expectations")
    assert engine_named() == "great-expectations"
    monkeypatch.setenv("MPG_EXPECTATIONS", "pandera")
    with pytest.raises(OptionsError, match=r"^MPG_EXPECTATIONS=pandera: not one of mpg, great-"):
        engine_named()
