"""Step times and stragglers (`mpg.transforms.step_times`) on named timelines; every expected
number is derived in a comment. The ml-goodput-measurement figures are cross-checked against
Google's package itself (pinned 0.2.3) on longer series."""

from __future__ import annotations

import datetime as dt
import itertools
import tempfile

import numpy as np
import pytest

from mpg.schemas import STEP_RANK_STRAGGLERS, STEP_TIME_STATS
from mpg.transforms.step_times import step_time_stats
from tests.support.adapters.ml_goodput_scenarios import MemoryLogger
from tests.support.adapters.pytorch_traces import RANKS, host_steps
from tests.support.conversion import convert, records
from tests.support.timeline import end, release, schedule, span, submit, sweep


def _stats(scheduler: list[dict], runtime: list[dict]) -> tuple[list[dict], list[dict]]:
    stats, stragglers = step_time_stats(sweep(scheduler, runtime))
    assert (stats.schema, stragglers.schema) == (STEP_TIME_STATS, STEP_RANK_STRAGGLERS)
    return stats.to_pylist(), stragglers.to_pylist()


def test_a_job_days_step_times_and_its_slow_steps() -> None:
    # Five kept steps on 2 chips, of 10, 10, 10, 20 and 50 s, back to back from 00:01.
    steps = [("00:01:00", "00:01:10"), ("00:01:10", "00:01:20"), ("00:01:20", "00:01:30")]
    steps += [("00:01:30", "00:01:50"), ("00:01:50", "00:02:40")]
    [row], stragglers = _stats(
        [submit("s", "00:00", 2), schedule("s", "00:00", 0, 2), end("s", "00:03")],
        [span("s", "step", a, b, step=n) for n, (a, b) in enumerate(steps, 1)],
    )
    assert stragglers == []
    assert (row["day"].isoformat(), row["steps"], row["chips_requested"]) == ("2026-11-20", 5, 2)
    # Sorted 10, 10, 10, 20, 50: mean 100 / 5; p90 at index 0.9 x 4 = 3.6, 20 + 0.6 x 30;
    # p99 at 3.96, 20 + 0.96 x 30.
    assert (row["mean_step_s"], row["median_step_s"], row["max_step_s"]) == (20, 10, 50)
    assert row["p90_step_s"] == pytest.approx(38, rel=1e-15)
    assert row["p99_step_s"] == pytest.approx(48.8, rel=1e-15)
    # ml-goodput: median 10, MAD = median(0, 0, 0, 10, 40) = 0, so the steps up to 10 s make the
    # ideal, 10 s; deviations 0, 0, 0, 10, 40; under 100 steps the deviation is their mean, 10.
    assert (row["baseline_step_s"], row["step_time_deviation_s"]) == (10, 10)
    # Slow steps: (20 - 10) + (50 - 10) = 50 s over the median, x 2 chips = 100 chip-s, of the
    # 100 s x 2 = 200 productive chip-s.
    assert (row["slow_step_chip_s"], row["productive_chip_s"], row["slow_step_share"]) == (
        100,
        200,
        0.5,
    )
    assert (row["ranks"], row["straggler_rank"], row["straggler_share"]) == (0, None, None)


def test_a_job_without_kept_steps_has_no_row() -> None:
    job = [submit("x", "00:00", 1), schedule("x", "00:00", 0, 1), end("x", "01:00")]
    assert _stats(job, [span("x", "init", "00:00", "00:01")]) == ([], [])


def test_lost_steps_are_not_looked_at_and_a_step_is_on_its_start_day() -> None:
    # Attempt 0 steps 1-2 (30 s each) are lost: evicted at 00:02 with no checkpoint. Attempt 1
    # redoes them as 60 s and 90 s steps, the second across midnight, and the job finishes.
    [day1], _ = _stats(
        [
            submit("t", "00:00", 1),
            schedule("t", "00:00", 0, 1),
            release("t", "00:02", 0),
            schedule("t", "23:50", 0, 1),
            end("t", "+1 00:10"),
        ],
        [
            span("t", "step", "00:00:00", "00:00:30", step=1),
            span("t", "step", "00:00:30", "00:01:00", step=2),
            span("t", "step", "23:57:00", "23:58:00", step=1, attempt=1),
            span("t", "step", "23:59:00", "+1 00:00:30", step=2, attempt=1),
        ],
    )
    # Day 1: the 60 s step and the 90 s one, which starts that day: median 75, and the 90 s step
    # 15 s over it. Productive on day 1: 60 + 60 s (the rest, 30 s, is day 2's, which has no
    # step starting on it and so no row).
    assert (day1["day"].isoformat(), day1["steps"]) == ("2026-11-20", 2)
    assert (day1["median_step_s"], day1["max_step_s"]) == (75, 90)
    assert (day1["slow_step_chip_s"], day1["productive_chip_s"]) == (15, 120)
    assert day1["slow_step_share"] == 15 / 120


def test_the_slowest_rank_of_each_step_and_how_often_each_is_the_straggler() -> None:
    def ranked(rank: int, step: int, a: str, b: str) -> dict:
        return {**span("r", "step", a, b, step=step), "rank": rank}

    [row], stragglers = _stats(
        [submit("r", "00:00", 4), schedule("r", "00:00", 0, 4), end("r", "00:01")],
        [
            # step 1: rank 0 10 s, rank 1 13 s (slowest); the step 00:00:10-00:00:25, 15 s
            ranked(0, 1, "00:00:10", "00:00:20"),
            ranked(1, 1, "00:00:12", "00:00:25"),
            # step 2: rank 0 15 s (slowest), rank 1 10 s; the step 00:00:25-00:00:40, 15 s
            ranked(0, 2, "00:00:25", "00:00:40"),
            ranked(1, 2, "00:00:26", "00:00:36"),
            # step 3: both 10 s: the lowest rank, 0, is the slowest; the step 10 s
            ranked(0, 3, "00:00:40", "00:00:50"),
            ranked(1, 3, "00:00:40", "00:00:50"),
        ],
    )
    assert (row["steps"], row["median_step_s"], row["max_step_s"], row["ranks"]) == (3, 15, 15, 2)
    assert row["mean_step_s"] == pytest.approx(40 / 3, rel=1e-15)
    # The ranks' spans cover 00:00:10-00:00:50 once: 40 s x 4 chips productive; nothing slow.
    assert (row["productive_chip_s"], row["slow_step_chip_s"]) == (160, 0)
    assert (row["straggler_rank"], row["straggler_share"]) == (0, 2 / 3)
    assert [
        (s["rank"], s["steps"], s["slowest_steps"], s["slowest_share"]) for s in stragglers
    ] == [(0, 3, 2, 2 / 3), (1, 3, 1, 1 / 3)]
    assert stragglers[0]["mean_step_s"] == pytest.approx(35 / 3, rel=1e-15)  # 10, 15, 10
    assert stragglers[1]["mean_step_s"] == 11  # 13, 10, 10


def _package_deviation(starts: list[float]) -> tuple[float, dict[int, float], float]:
    """The package's own ideal step time, per-step deviations and deviation metric, from the
    step start times its recorder logs (a step's time is the next step's start less its own)."""
    from ml_goodput_measurement import goodput
    from ml_goodput_measurement.src import goodput_utils

    t0 = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    logger = MemoryLogger("steps")
    recorder = goodput.GoodputRecorder(
        job_name="steps", logger_name="mpg-test", logging_enabled=True, cloud_logger=logger
    )
    recorder.record_job_start_time(t0)
    for n, start in enumerate(starts, 1):
        recorder.record_step_start_time(n, t0 + dt.timedelta(seconds=start))
    with tempfile.TemporaryDirectory() as cache:
        calculator = goodput.GoodputCalculator(
            job_name="steps", logger_name="mpg-test", cloud_logger=logger, cache_dir=cache
        )
        deviations = calculator.get_step_deviation()
        times = [b - a for a, b in itertools.pairwise(starts)]
        ideal = goodput_utils.compute_ideal_step_time(times)
    return ideal, deviations, goodput_utils.compute_step_deviation_from_baseline(deviations)


@pytest.mark.parametrize("n", [40, 250, 1400])  # the metric's three regimes: < 100, < 1,100, more
def test_ideal_step_time_and_deviation_are_ml_goodput_measurements(n: int) -> None:
    # Back-to-back steps of whole milliseconds (so start-to-start, the package's step time, is
    # each span's length), mostly ~2 s with slow outliers and a few sub-second steps it ignores.
    rng = np.random.default_rng(n)
    ms = rng.integers(1900, 2100, n)
    ms[rng.random(n) < 0.05] *= 3
    ms[rng.random(n) < 0.02] = 500
    starts = np.concatenate(([0], np.cumsum(ms))) / 1000 + 60
    clock = [
        (dt.datetime(2026, 11, 20) + dt.timedelta(seconds=s)).strftime("%H:%M:%S.%f")
        for s in starts
    ]
    [row], _ = _stats(
        [submit("g", "00:00", 8), schedule("g", "00:00", 0, 8), end("g", "23:00")],
        [span("g", "step", a, b, step=k) for k, (a, b) in enumerate(itertools.pairwise(clock), 1)],
    )
    ideal, per_step, metric = _package_deviation(list(starts))
    assert len(per_step) == row["steps"] == n
    assert row["baseline_step_s"] == pytest.approx(ideal, rel=1e-9)
    assert row["step_time_deviation_s"] == pytest.approx(metric, rel=1e-7, abs=1e-6)


def test_the_straggler_of_real_ddp_traces() -> None:
    # tests/fixtures/adapters/pytorch/ddp: two real ranks; rank 1 is the slower in every step.
    conversion = convert("pytorch", list(RANKS), "--chip-generation", "gpu-a100")
    [row], stragglers = _stats(records(conversion, "scheduler"), records(conversion, "runtime"))
    ranks = [host_steps(p) for p in RANKS]
    us = [{n: ((a + 500) // 1000, (b + 500) // 1000) for n, (a, b, _) in r.items()} for r in ranks]
    assert all(us[1][n][1] - us[1][n][0] > us[0][n][1] - us[0][n][0] for n in (2, 3, 4))
    assert (row["steps"], row["ranks"], row["straggler_rank"], row["straggler_share"]) == (
        3,
        2,
        1,
        1.0,
    )
    hull = sorted((max(u[n][1] for u in us) - min(u[n][0] for u in us)) / 1e6 for n in (2, 3, 4))
    assert (row["median_step_s"], row["max_step_s"]) == (hull[1], hull[2])
    assert [(s["rank"], s["steps"], s["slowest_steps"]) for s in stragglers] == [
        (0, 3, 0),
        (1, 3, 3),
    ]
