"""Checkpoint advice validated where the truth is known: fleets of
`tests.support.checkpoint_fleets` with given interruption rates and intervals (docs/metrics.md,
"Checkpoint advice", states each tolerance and the figures measured). Interruptions and MTBI
exact; no advice that its own model (recomputed here with Python's math) says loses; the fleet's
savings the sum of its jobs'; the savings promised against those realised when the same fleet,
with the same interruptions, is replayed at the advised settings; MTBI's 90% interval against the
true MTBI."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from mpg.transforms.account import sweep_chip_time
from mpg.transforms.checkpoints import (
    MIN_INTERRUPTIONS,
    checkpoint_advice,
    poisson_interval,
)
from tests.support.checkpoint_fleets import (
    CheckpointJob,
    FleetTables,
    advice_by_slice,
    checkpoint_fleet,
)
from tests.unit.test_checkpoint_advice import _predicted


def _fleet(
    n: int,
    seed: int,
    rate: tuple[float, float] = (0.02, 1.0),
    step: tuple[float, float] = (20, 300),
) -> list[CheckpointJob]:
    """Training jobs with interruption rates in `rate` per all-allocated hour (log-uniform),
    steps of `step` seconds, intervals of 10 min to 4 h, saves of 10 s to 5 min."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(n):
        step_s = float(rng.uniform(*step))
        interval = float(np.exp(rng.uniform(np.log(600), np.log(14_400))))
        jobs.append(
            CheckpointJob(
                f"train-{i:03d}",
                chips=int(2 ** rng.integers(0, 9)),
                step_s=step_s,
                checkpoint_every=max(1, round(interval / step_s)),
                save_s=float(rng.uniform(10, 300)),
                interrupts_per_hour=float(np.exp(rng.uniform(*np.log(rate)))),
                init_s=float(rng.uniform(20, 120)),
                compile_s=float(rng.uniform(30, 600)),
                restore_s=float(rng.uniform(20, 300)),
                reschedule_s=float(rng.uniform(60, 1800)),
            )
        )
    return jobs


def _advise(fleet: FleetTables) -> list[dict]:
    swept = sweep_chip_time(fleet.scheduler, fleet.runtime, fleet.profiles, fleet.data_end_us)
    return checkpoint_advice(swept).to_pylist()


def _replayed(jobs: list[CheckpointJob], rows: list[dict], seed: int, days: float) -> list[dict]:
    """The same fleet, with the same interruptions, each job saving at its advised setting."""
    by = {r["job_id"]: r for r in rows}
    return _advise(
        checkpoint_fleet(
            [
                replace(j, checkpoint_every=by[j.job_id]["advised_interval_steps"])
                if by[j.job_id]["advised_interval_steps"]
                else j
                for j in jobs
            ],
            days=days,
            seed=seed,
        )
    )


@pytest.fixture(scope="module")
def week() -> tuple[list[CheckpointJob], list[dict], list[dict]]:
    """40 jobs over a week (seed 3): the jobs, their advice, and the replay at its settings."""
    jobs = _fleet(40, seed=3)
    rows = _advise(checkpoint_fleet(jobs, days=7, seed=3))
    return jobs, rows, _replayed(jobs, rows, 3, 7)


def _kinds(n: int, seed: int) -> list[CheckpointJob]:
    """Jobs with every kind of interruption the records can tell apart: gangs of 1-4 tasks torn
    down at once or over a minute, given their chips back later or at the same instant, restarts
    in place, crashes during init (their attempt numbered or not; an unnumbered crash right
    after a restart in place looks, to both records, like one interruption, so no job has
    both)."""
    rng = np.random.default_rng(seed)
    jobs = []
    for job in _fleet(n, seed, rate=(0.05, 1.5)):
        numbered = bool(rng.integers(2))
        jobs.append(
            replace(
                job,
                init_s=float(rng.uniform(30, 600)),
                tasks=int(rng.choice([1, 2, 4])),
                teardown_s=float(rng.choice([0, 0, 5, 60])),
                reschedule_s=float(rng.choice([job.reschedule_s, 0])),
                restart_in_place_p=float(rng.choice([0, 0.3])) if numbered else 0.0,
                crash_in_init_p=float(rng.choice([0, 0.2, 0.5])),
                numbers_crashed_attempts=numbered,
            )
        )
    return jobs


@pytest.fixture(scope="module")
def kinds() -> tuple[FleetTables, list[dict]]:
    fleet = checkpoint_fleet(_kinds(60, seed=5), days=3, seed=9)
    return fleet, _advise(fleet)


def test_interruptions_mtbi_and_young_are_exact(kinds: tuple[FleetTables, list[dict]]) -> None:
    fleet, rows = kinds
    truth = {r["job_id"]: r for r in fleet.truth.to_dicts()}
    # every kind drawn, crashes in init many times
    kinds = ("evictions", "restarts_in_place", "crashes_in_init", "interruptions")
    assert {k: sum(t[k] for t in truth.values()) for k in kinds} == {
        "evictions": 1536,
        "restarts_in_place": 104,
        "crashes_in_init": 604,
        "interruptions": 2244,
    }
    for row in rows:
        drawn = truth[row["job_id"]]
        assert row["interruptions"] == drawn["interruptions"], row["job_id"]
        assert row["mtbi_s"] == row["all_allocated_s"] / drawn["interruptions"]
        assert row["advised_interval_s"] == pytest.approx(
            math.sqrt(2 * row["mean_save_s"] * row["all_allocated_s"] / drawn["interruptions"]),
            rel=1e-12,
        )
    # the crashes of runtimes that do not number them, and the interruptions after a job's last
    # attempt began, are the scheduler's alone
    for row in rows:
        unseen = truth[row["job_id"]]["unseen_by_runtime"]
        assert row["interruptions_from_scheduler_only"] == unseen, row["job_id"]
    assert sum(t["unseen_by_runtime"] for t in truth.values()) == 268


def _gains(row: dict) -> list[float]:
    """The model's P(advised setting) - P(observed interval) at MTBI and at its interval's ends,
    recomputed with Python's math from the row's own inputs."""
    low, high = poisson_interval(np.array([row["interruptions"]]))
    chips, share = row["chips_requested"], row["step_s"] / (row["running_s"] - row["save_s"])
    setting = row["advised_interval_steps"] * row["mean_step_s"]
    gains = []
    for count in (row["interruptions"], high[0], low[0]):  # MTBI, its low end, its high end
        rate = count / row["all_allocated_s"]
        at = (
            _predicted(rate, row["mean_save_s"], share, row["running_s"], x)[2] * chips
            for x in (setting, row["observed_interval_s"])
        )
        gains.append(next(at) - next(at))
    return gains


def test_no_job_is_advised_an_interval_its_model_says_loses(
    week: tuple[list[CheckpointJob], list[dict], list[dict]],
    kinds: tuple[FleetTables, list[dict]],
) -> None:
    rows = week[1] + kinds[1]
    advised = [r for r in rows if r["advice"] == "change"]
    assert len(advised) == 78
    for row in rows:
        if row["advice"] in ("change", "keep"):
            assert row["interruptions"] >= MIN_INTERRUPTIONS
            gains = _gains(row)
            recorded = [row[f"predicted_gain{e}_chip_s"] for e in ("", *_ENDS)]
            assert recorded == pytest.approx(gains, rel=1e-9, abs=1e-6), row["job_id"]
        if row["advice"] == "change":
            assert min(gains) > 0, row["job_id"]
            assert row["chip_hours_saved"] == row["predicted_gain_chip_s"] / 3600 > 0
            assert row["rg_advised"] > row["rg_predicted"]
        else:
            assert row["chip_hours_saved"] == 0
            assert row["rg_advised"] == row["rg_predicted"]
        if row["advice"] == "keep":  # it would lose at MTBI or at an end of its interval
            assert min(gains) <= 0 or row["advised_interval_steps"] == round(
                row["observed_interval_steps"]
            )


_ENDS = ("_at_mtbi_low", "_at_mtbi_high")


def test_the_fleets_savings_are_the_sum_of_its_jobs(
    week: tuple[list[CheckpointJob], list[dict], list[dict]],
) -> None:
    rows = week[1]
    [fleet] = [
        r
        for r in advice_by_slice(pl.DataFrame(rows).to_arrow()).to_pylist()
        if r["chip_generation"] is None and r["framework"] is None and r["workload_class"] is None
    ]
    saved = sum(r["chip_hours_saved"] for r in rows)
    assert fleet["chip_hours_saved"] == pytest.approx(saved, rel=1e-12)
    assert round(saved) == 20537
    # a week from midnight to midnight: 7 calendar days
    assert (fleet["days"], fleet["chip_hours_saved_per_day"]) == (7, fleet["chip_hours_saved"] / 7)
    assert fleet["jobs_to_change"] == sum(r["advice"] == "change" for r in rows) == 30


def test_the_savings_promised_are_realised_when_the_advice_is_applied(
    week: tuple[list[CheckpointJob], list[dict], list[dict]],
) -> None:
    """Replayed with the same interruptions at the advised settings, the jobs advised to change
    gain, in all, what was promised, within 10% (a week of a few dozen interruptions a job is
    a sum of random draws: docs/metrics.md has the spread over seeds)."""
    _, observed, replayed = week
    allocated = [r["all_allocated_chip_s"] for r in observed]
    assert [r["all_allocated_chip_s"] for r in replayed] == pytest.approx(allocated, rel=1e-12)
    change = [
        (old, new) for old, new in zip(observed, replayed, strict=True) if old["advice"] == "change"
    ]
    promised = sum(old["chip_hours_saved"] for old, _ in change)
    realised = sum(new["productive_chip_s"] - old["productive_chip_s"] for old, new in change)
    assert realised / 3600 == pytest.approx(promised, rel=0.10)
    assert round(realised / 3600 / promised, 3) == 0.945
    # the fleet's RG, observed and replayed
    productive = sum(r["productive_chip_s"] for r in observed) / sum(allocated)
    replayed_rg = sum(r["productive_chip_s"] for r in replayed) / sum(allocated)
    assert (round(productive, 3), round(replayed_rg, 3)) == (0.797, 0.852)


def test_the_model_predicts_the_ledger(
    week: tuple[list[CheckpointJob], list[dict], list[dict]],
) -> None:
    jobs, observed, _ = week
    by = {r["job_id"]: r for r in observed}
    # The save time and interval the fleet was drawn with come back out.
    for job in jobs:
        row = by[job.job_id]
        assert row["mean_save_s"] == pytest.approx(job.save_s, rel=1e-6)
        assert row["mean_step_s"] == pytest.approx(job.step_s, rel=1e-6)
        assert row["observed_interval_steps"] == job.checkpoint_every
        assert row["observed_interval_s"] == pytest.approx(
            job.checkpoint_every * job.step_s, rel=1e-6
        )
    # Lost progress + save time: the fleet's within 5% of the ledger (one job's, over a week, is
    # a sum of a few dozen random draws: see the next test).
    ledger = sum(r["lost_progress_chip_s"] + r["checkpoint_save_chip_s"] for r in observed)
    predicted = sum(r["predicted_lost_chip_s"] + r["predicted_save_chip_s"] for r in observed)
    assert predicted == pytest.approx(ledger, rel=0.05)


def test_each_jobs_loss_is_predicted_once_it_has_hundreds_of_interruptions() -> None:
    # 120 days at 0.1 to 1 interruptions an hour: 250 to 3,000 interruptions a job, so one job's
    # lost progress + save time is predicted within 10% (its own noise is a few per cent).
    jobs = _fleet(6, seed=11, rate=(0.1, 1.0), step=(200, 300))
    for r in _advise(checkpoint_fleet(jobs, days=120, seed=11)):
        assert r["interruptions"] >= 250
        expected = r["lost_progress_chip_s"] + r["checkpoint_save_chip_s"]
        assert r["predicted_lost_chip_s"] + r["predicted_save_chip_s"] == pytest.approx(
            expected, rel=0.10
        ), r["job_id"]
        assert r["rg_predicted"] == pytest.approx(r["rg"], abs=0.02), r["job_id"]


def test_mtbis_interval_holds_the_true_mtbi_as_often_as_it_says() -> None:
    """300 one-day jobs at 0.1 to 1 interruptions an hour: the share whose 90% interval holds
    the true MTBI (1 / rate) is the interval's exact coverage at each job's expected count (the
    Poisson chance of a count whose interval holds it), within 3 binomial standard deviations."""
    rng = np.random.default_rng(21)
    rates = np.exp(rng.uniform(np.log(0.1), np.log(1.0), 300))
    jobs = [
        CheckpointJob(f"j{i:03d}", 1, 60, 10, 30, float(rate), reschedule_s=300)
        for i, rate in enumerate(rates)
    ]
    rows = _advise(checkpoint_fleet(jobs, days=1, seed=21))
    true_mtbi = 3600 / rates
    held = [
        (r["mtbi_low_s"] <= m) & (r["mtbi_high_s"] is None or m <= r["mtbi_high_s"])
        for r, m in zip(rows, true_mtbi, strict=True)
    ]
    counts = np.arange(0, 200)
    low, high = poisson_interval(counts)
    expected = []
    for r, rate in zip(rows, rates, strict=True):
        mean = rate * r["all_allocated_s"] / 3600
        pmf = np.exp(counts * math.log(mean) - mean - [math.lgamma(n + 1) for n in counts])
        expected.append(pmf[(low <= mean) & (mean <= high)].sum())
    coverage, chance = np.mean(held), np.mean(expected)
    assert abs(coverage - chance) <= 3 * math.sqrt(chance * (1 - chance) / len(rows))
    assert (round(coverage, 3), round(chance, 3)) == (0.93, 0.936)
