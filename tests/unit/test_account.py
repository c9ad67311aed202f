"""Chip-time accounting on named timelines; each expected number is derived in a comment."""

from __future__ import annotations

import random

import polars as pl
import pytest

from mpg.definitions.catalog import ChipCatalog
from mpg.transforms.account import _by_job_and_instant
from tests.support.timeline import (
    NEXT_DAY,
    account,
    catalog_with,
    end,
    profile,
    release,
    schedule,
    span,
    submit,
)


def test_gang_scheduled_piecemeal() -> None:
    # 4 chips in two tasks of 2; task 1 arrives 10 min late: 600 s x 4 = 2400 chip-s of scheduling.
    # One kept step covers the 50 all-allocated minutes: 3000 s x 4 = 12000 chip-s productive.
    a = account(
        [
            submit("g", "00:00", 4),
            schedule("g", "00:00", 0, 2),
            schedule("g", "00:10", 1, 2),
            end("g", "01:00"),
        ],
        [span("g", "step", "00:10", "01:00", step=1)],
    )
    row = a.job_day("g")
    assert (row["wanted_chip_s"], row["all_allocated_chip_s"], row["productive_chip_s"]) == (
        14400,
        12000,
        12000,
    )
    assert a.categories("g") == {"scheduling": 2400, "productive_unprofiled": 12000}
    assert row["sg"] == pytest.approx(12000 / 14400, rel=1e-15)
    assert row["pg"] is None and row["mpg"] is None


@pytest.mark.parametrize("schedule_first", [True, False])
def test_release_and_schedule_at_one_instant_keep_the_job_allocated(schedule_first: bool) -> None:
    # Releases apply before schedules whatever the file order: 3600 s x 2 all allocated.
    pair = [schedule("r", "00:30", 0, 2), release("r", "00:30", 0)]
    a = account(
        [
            submit("r", "00:00", 2),
            schedule("r", "00:00", 0, 2),
            *(pair if schedule_first else pair[::-1]),
            end("r", "01:00"),
        ]
    )
    assert a.job_day("r")["all_allocated_chip_s"] == 7200
    assert a.categories("r") == {"runtime_idle": 7200}


def test_a_later_schedule_replaces_the_task_count() -> None:
    # Task 0 first gets 2 of 4 chips, then 4 at 00:20: all-allocated from 00:20, 2400 s x 4.
    a = account(
        [
            submit("s", "00:00", 4),
            schedule("s", "00:00", 0, 2),
            schedule("s", "00:20", 0, 4),
            end("s", "01:00"),
        ]
    )
    assert a.job_day("s")["all_allocated_chip_s"] == 9600


def test_two_schedules_at_one_instant_take_the_larger() -> None:
    a = account(
        [
            submit("d", "00:00", 4),
            schedule("d", "00:00", 0, 4),
            schedule("d", "00:00", 0, 2),
            end("d", "00:10"),
        ]
    )
    assert a.job_day("d")["all_allocated_chip_s"] == 2400


def test_job_end_releases_every_task_and_ends_wanted_time() -> None:
    # Chips still held at JOB_END stop counting there; a schedule after JOB_END is outside wanted.
    a = account(
        [
            submit("e", "00:00", 1),
            schedule("e", "00:00", 0, 1),
            end("e", "00:10"),
            schedule("e", "00:20", 0, 1),
        ]
    )
    assert a.job_day("e")["wanted_chip_s"] == 600
    assert a.job_day("e")["all_allocated_chip_s"] == 600


def test_checkpoint_that_ends_after_the_attempt_ended_is_not_durable() -> None:
    # Attempt 0: steps 1-2 (00:00-00:02); its save of step 2 ends 00:05, after attempt 1 began at
    # 00:04, so steps 1-2 are lost: 120 s x 1. Attempt 1 (last, FINISHED) keeps step 1 again.
    a = account(
        [submit("c", "00:00", 1), schedule("c", "00:00", 0, 1), end("c", "00:06")],
        [
            span("c", "step", "00:00", "00:01", step=1),
            span("c", "step", "00:01", "00:02", step=2),
            span("c", "checkpoint_save", "00:02", "00:05", step=2),
            span("c", "step", "00:04", "00:05", step=1, attempt=1),
        ],
    )
    # 00:02-00:04 save (120 s), 00:04-00:05 kept step outranks the save, 00:05-00:06 idle.
    assert a.categories("c") == {
        "lost_progress": 120,
        "checkpoint_save": 120,
        "productive_unprofiled": 60,
        "runtime_idle": 60,
    }


@pytest.mark.parametrize(("state", "kept"), [("FINISHED", 180), ("FAILED", 60), ("CANCELLED", 60)])
def test_last_attempt_keeps_unsaved_steps_only_when_the_job_finished(state: str, kept: int) -> None:
    # Steps 1-3 of one minute each, a save of step 1 (00:01-00:01:30, overlapped by step 2).
    a = account(
        [submit("f", "00:00", 1), schedule("f", "00:00", 0, 1), end("f", "00:03", state)],
        [
            span("f", "step", "00:00", "00:01", step=1),
            span("f", "checkpoint_save", "00:01", "00:01:30", step=1),
            span("f", "step", "00:01", "00:02", step=2),
            span("f", "step", "00:02", "00:03", step=3),
        ],
    )
    assert a.job_day("f")["productive_chip_s"] == kept
    assert a.categories("f").get("lost_progress", 0) == 180 - kept


def test_serving_steps_are_always_kept() -> None:
    a = account(
        [
            submit("s", "00:00", 2, cls="serving"),
            schedule("s", "00:00", 0, 2),
            end("s", "00:10", "FAILED"),
        ],
        [span("s", "step", "00:00", "00:10", step=1)],
    )
    assert a.job_day("s")["productive_chip_s"] == 1200


def test_open_job_wants_chips_until_the_end_of_all_data() -> None:
    # "o" never ends; the latest record of the run is another job's span ending 02:00.
    a = account(
        [
            submit("o", "00:00", 2),
            schedule("o", "00:30", 0, 2),
            submit("x", "01:00", 1),
            end("x", "01:30"),
        ],
        [span("x", "init", "01:00", "02:00")],
    )
    assert a.job_day("o")["wanted_chip_s"] == 7200 * 2
    assert a.job_day("o")["all_allocated_chip_s"] == 5400 * 2


def test_spans_are_cut_at_midnight() -> None:
    # A data_wait from 23:30 to 00:30 the next day: 1800 s x 4 on each day.
    a = account(
        [submit("m", "23:00", 4), schedule("m", "23:00", 0, 4), end("m", "+1 01:00")],
        [span("m", "data_wait", "23:30", "+1 00:30")],
    )
    assert a.categories("m")["data_wait"] == 7200
    assert a.categories("m", NEXT_DAY)["data_wait"] == 7200
    assert a.job_day("m")["wanted_chip_s"] == 3600 * 4
    assert a.job_day("m", NEXT_DAY)["wanted_chip_s"] == 3600 * 4


def test_spans_count_only_inside_all_allocated_time() -> None:
    # The job has its chips 00:10-00:20 only; a step 00:00-00:30 contributes 600 s.
    a = account(
        [
            submit("a", "00:00", 1),
            schedule("a", "00:10", 0, 1),
            release("a", "00:20", 0),
            end("a", "00:30"),
        ],
        [span("a", "step", "00:00", "00:30", step=1)],
    )
    assert a.categories("a") == {"scheduling": 1200, "productive_unprofiled": 600}


def test_overlapping_spans_count_once_by_precedence() -> None:
    # init 0-10, compile 5-15, data_wait 0-20, restore 12-14 (min): compile beats init, restore
    # beats compile, everything beats data_wait.
    a = account(
        [submit("p", "00:00", 1), schedule("p", "00:00", 0, 1), end("p", "00:20")],
        [
            span("p", "init", "00:00", "00:10"),
            span("p", "compile", "00:05", "00:15"),
            span("p", "data_wait", "00:00", "00:20"),
            span("p", "checkpoint_restore", "00:12", "00:14", step=0),
        ],
    )
    assert a.categories("p") == {
        "init": 300,
        "compile": 480,
        "checkpoint_restore": 120,
        "data_wait": 300,
    }


def test_program_goodput_is_a_ratio_of_sums_over_the_days_profiles() -> None:
    # tpu-v4 peak 275e12/chip, 2 chips. Ideal step times: 2.75e15/5.5e14 = 5 s and 1.1e16/5.5e14 =
    # 20 s over measured 10 s + 40 s: PG = 25 / 50 = 0.5; ideal = 0.5 x 1200 productive.
    a = account(
        [submit("q", "00:00", 2), schedule("q", "00:00", 0, 2), end("q", "00:10")],
        [span("q", "step", "00:00", "00:10", step=1)],
        [profile("q", "00:01", 10.0, 2.75e15, 2), profile("q", "00:05", 40.0, 1.1e16, 2)],
    )
    row = a.job_day("q")
    assert (row["pg"], row["ideal_chip_s"], row["mpg"]) == (0.5, 600, 0.5)
    assert a.categories("q") == {"ideal": 600, "program_loss": 600}


def test_a_generation_without_a_peak_gets_sg_and_rg_but_no_pg() -> None:
    a = account(
        [submit("u", "00:00", 1, gen="gpu-k80"), schedule("u", "00:00", 0, 1), end("u", "00:10")],
        [span("u", "step", "00:00", "00:05", step=1)],
        [profile("u", "00:01", 10.0, 1e12, 1)],
        catalog=catalog_with("gpu-k80", None),
    )
    row = a.job_day("u")
    assert (row["sg"], row["rg"], row["pg"], row["ideal_chip_s"]) == (1.0, 0.5, None, None)
    assert a.categories("u") == {"productive_unprofiled": 300, "runtime_idle": 300}


# tpu-v4: 275e12 FLOP/s and 1200e9 HBM bytes/s per chip; every job below runs on 2 chips, so a
# step's compute term is model_flops / 5.5e14 s and its memory term hbm_bytes / 2.4e12 s. One
# 10 s step of 2.75e15 FLOPs: 5 s of compute. 1.92e13 HBM bytes: 8 s; 2.4e12 bytes: 1 s.
FIVE_S_OF_COMPUTE = 2.75e15
EIGHT_S_OF_HBM = 1.92e13


@pytest.mark.parametrize(
    ("gen", "catalog", "hbm", "version", "pg", "ideal"),
    [
        # v1 ignores hbm_bytes: 5 s / 10 s; ideal = PG x 600 s productive x 2 chips.
        ("tpu-v4", None, EIGHT_S_OF_HBM, "v1", 0.5, 600),
        # memory-bound: max(5 s, 8 s) / 10 s.
        ("tpu-v4", None, EIGHT_S_OF_HBM, "v2", 0.8, 960),
        # compute-bound: max(5 s, 1 s) / 10 s, as v1.
        ("tpu-v4", None, 2.4e12, "v2", 0.5, 600),
        # no hbm_bytes: the compute term alone, as v1.
        ("tpu-v4", None, None, "v2", 0.5, 600),
        # a peak but no bandwidth in the catalog: the compute term alone, as v1.
        ("tpu-x", catalog_with("tpu-x", 275e12, None), EIGHT_S_OF_HBM, "v2", 0.5, 600),
        # a bandwidth but no peak: no PG, as v1 (the memory term alone is no roofline).
        ("tpu-y", catalog_with("tpu-y", None, 1200e9), EIGHT_S_OF_HBM, "v2", None, None),
    ],
)
def test_v2_bounds_each_step_by_hbm_traffic_where_it_is_known(
    gen: str,
    catalog: ChipCatalog | None,
    hbm: float | None,
    version: str,
    pg: float | None,
    ideal: float | None,
) -> None:
    a = account(
        [submit("m", "00:00", 2, gen=gen), schedule("m", "00:00", 0, 2), end("m", "00:10")],
        [span("m", "step", "00:00", "00:10", step=1)],
        [profile("m", "00:01", 10.0, FIVE_S_OF_COMPUTE, 2, hbm_bytes=hbm)],
        catalog=catalog,
        metric_version=version,
    )
    row = a.job_day("m")
    assert (row["metric_version"], row["pg"], row["ideal_chip_s"]) == (version, pg, ideal)


def test_v2_falls_back_per_record_not_per_day() -> None:
    # Two 10 s steps: one with hbm_bytes (max(5 s, 8 s) = 8 s), one without (5 s of compute).
    # PG = (8 + 5) / (10 + 10) = 0.65; ideal = 0.65 x 1200 productive chip-s = 780.
    a = account(
        [submit("f", "00:00", 2), schedule("f", "00:00", 0, 2), end("f", "00:10")],
        [span("f", "step", "00:00", "00:10", step=1)],
        [
            profile("f", "00:01", 10.0, FIVE_S_OF_COMPUTE, 2, hbm_bytes=EIGHT_S_OF_HBM),
            profile("f", "00:02", 10.0, FIVE_S_OF_COMPUTE, 2),
        ],
        metric_version="v2",
    )
    row = a.job_day("f")
    assert (row["pg"], row["ideal_chip_s"]) == (0.65, 780)
    assert a.categories("f") == {"ideal": 780, "program_loss": 420}


def test_a_huge_gang_does_not_overflow() -> None:
    # The most chips a job may ask for (10**9) for one day: 86400 x 10**9 chip-s, beyond what
    # int64 chip-microseconds hold.
    chips = 10**9
    a = account(
        [submit("h", "00:00", chips), schedule("h", "00:00", 0, chips), end("h", "+1 00:00")]
    )
    assert a.job_day("h")["wanted_chip_s"] == 86400 * chips


def test_a_job_whose_wanted_time_is_empty_has_no_rows() -> None:
    a = account([submit("z", "00:00", 1), end("z", "00:00")])
    assert a.job_days == []


@pytest.mark.parametrize("jobs", [3, 5000])
def test_boundary_events_come_in_job_then_instant_order(jobs: int) -> None:
    """One sort by a combined key where job and instant fit in 62 bits (3 jobs over a century),
    two sorts where they do not (5,000 jobs: 13 bits of key beside 52 of instants): the same
    order either way."""
    rng = random.Random(jobs)
    first, last = 946_684_800_000_000, 4_102_444_800_000_000 - 1  # 2000-01-01 .. 2099-12-31
    rows = {(rng.randrange(jobs), rng.randint(first, last)) for _ in range(20_000)}
    rows |= {(0, first), (jobs - 1, last)}
    events = pl.DataFrame(
        {"key": [k for k, _ in rows], "t": [t for _, t in rows], "counter": [1] * len(rows)},
        schema={"key": pl.UInt32, "t": pl.Int64, "counter": pl.UInt8},
    )
    ordered = _by_job_and_instant(events)
    assert ordered.select("key", "t").rows() == sorted(rows)
    assert ordered.equals(events.sort("key", "t"))
