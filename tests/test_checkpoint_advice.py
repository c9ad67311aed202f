"""Checkpoint advice (`mpg.transforms.checkpoints`): what a job did, read off a named timeline
(each number derived in a comment), the model's predictions recomputed here by the closed form
with Python's math, and the model validated where the truth is known: fleets of
`mpg.simulate.checkpoints` with given interruption rates and intervals, replayed at the advised
interval (docs/metrics.md, "Checkpoint advice", states the tolerance)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from mpg.schemas import CHECKPOINT_ADVICE, CHECKPOINT_ADVICE_BY_SLICE
from mpg.simulate.checkpoints import CheckpointJob, checkpoint_fleet
from mpg.transforms.account import sweep_chip_time
from mpg.transforms.checkpoints import checkpoint_advice, checkpoint_advice_by_slice
from tests.timeline import end, release, schedule, span, submit, sweep


def _job(job: str, chips: int = 4, gen: str = "tpu-v5p") -> tuple[list[dict], list[dict]]:
    """Saves every 2 steps of 10 min, each save 1 min; evicted once at 01:00, back at 01:10.

    attempt 0: init 00:00-00:01, compile -00:03, steps 1-2 -00:23, save(2) -00:24, steps 3-4
      -00:44, save(4) -00:45, step 5 -00:55, step 6 cut at the eviction, 01:00;
    attempt 1: init 01:10-01:11, compile -01:12, restore(4) -01:13, steps 5-6 -01:33,
      save(6) -01:34, step 7 -01:44; the job finishes at 01:44.
    """
    scheduler = [
        submit(job, "00:00", chips, gen=gen),
        schedule(job, "00:00", 0, chips),
        release(job, "01:00", 0),
        schedule(job, "01:10", 0, chips),
        end(job, "01:44"),
    ]
    attempt0 = [
        span(job, "init", "00:00", "00:01"),
        span(job, "compile", "00:01", "00:03"),
        span(job, "step", "00:03", "00:13", step=1),
        span(job, "step", "00:13", "00:23", step=2),
        span(job, "checkpoint_save", "00:23", "00:24", step=2),
        span(job, "step", "00:24", "00:34", step=3),
        span(job, "step", "00:34", "00:44", step=4),
        span(job, "checkpoint_save", "00:44", "00:45", step=4),
        span(job, "step", "00:45", "00:55", step=5),
        span(job, "step", "00:55", "01:00", step=6),
    ]
    attempt1 = [
        span(job, "init", "01:10", "01:11", attempt=1),
        span(job, "compile", "01:11", "01:12", attempt=1),
        span(job, "checkpoint_restore", "01:12", "01:13", step=4, attempt=1),
        span(job, "step", "01:13", "01:23", step=5, attempt=1),
        span(job, "step", "01:23", "01:33", step=6, attempt=1),
        span(job, "checkpoint_save", "01:33", "01:34", step=6, attempt=1),
        span(job, "step", "01:34", "01:44", step=7, attempt=1),
    ]
    return scheduler, attempt0 + attempt1


def _predicted(lam: float, delta: float, share: float, running: float, x: float) -> tuple:
    """The model's (lost, completed saves, productive) seconds at interval x, by the closed form
    of docs/metrics.md."""
    p = x + delta
    q = math.exp(-lam * p)
    mean_min = ((1 - math.exp(-lam * x)) / lam - x * q) / (1 - q)
    mean_phase = 1 / lam - p * q / (1 - q)
    saves = lam * delta * q / (1 - q)
    lost = lam * share * mean_min
    cut = lam * (mean_phase - mean_min)
    return lost * running, saves * running, (share * (1 - saves - cut) - lost) * running


def test_what_a_job_did_and_what_the_model_advises() -> None:
    [row] = checkpoint_advice(sweep(*_job("c"))).to_pylist()
    # All-allocated: 00:00-01:00 and 01:10-01:44, 94 min = 5640 s; wanted 00:00-01:44, 6240 s.
    assert (row["all_allocated_s"], row["wanted_s"], row["all_allocated_chip_s"]) == (
        5640,
        6240,
        5640 * 4,
    )
    # One interruption (attempt 0 ends where attempt 1 begins); MTBI 5640 s.
    assert (row["interruptions"], row["mtbi_s"]) == (1, 5640)
    assert row["interruptions_per_hour"] == 3600 / 5640
    # Three 60 s saves; one restart, 01:10 to its first step at 01:13: 180 s.
    assert (row["saves"], row["save_s"], row["mean_save_s"]) == (3, 180, 60)
    assert (row["restarts"], row["restart_s"], row["mean_restart_s"]) == (1, 180, 180)
    # Work before each save: 00:03-00:23, 00:24-00:44, 01:13-01:33: 20 min each.
    assert (row["intervals"], row["interval_s"], row["observed_interval_s"]) == (3, 3600, 1200)
    # Startup 60 + 120 + 60 + 60 + 60 s; running 5640 - 360 = 5280 s, of which steps 5100 s
    # (kept 40 + 30 min, lost 10 + 5 min) and saves 180 s.
    assert (row["running_s"], row["step_s"]) == (5280, 5100)
    assert (row["productive_chip_s"], row["lost_progress_chip_s"]) == (4200 * 4, 900 * 4)
    assert (row["checkpoint_save_chip_s"], row["rg"]) == (180 * 4, 4200 / 5640)
    # Young/Daly: sqrt(2 x 60 x 5640) = 822.7 s, shorter than the 1200 s the job used.
    assert row["advised_interval_s"] == math.sqrt(2 * 60 * 5640)
    # Steps 1-2, 3-4 and 5-6 (attempt 1) before the saves: 2 steps of 600 s between saves, and
    # the advised 822.7 s is 1 step (1.37 rounded).
    assert (row["interval_steps"], row["mean_step_s"], row["observed_interval_steps"]) == (
        6,
        600,
        2,
    )
    assert row["advised_interval_steps"] == 1
    # The model (lam = 1 / 5640 per s, s = 5100 / (5280 - 180) = 1) at the observed interval and
    # at the advised setting, 1 step of 600 s.
    lost, saves, productive = _predicted(1 / 5640, 60, 1.0, 5280, 1200)
    *_, advised = _predicted(1 / 5640, 60, 1.0, 5280, 600)
    assert row["predicted_lost_chip_s"] == pytest.approx(lost * 4, rel=1e-12)
    assert row["predicted_save_chip_s"] == pytest.approx(saves * 4, rel=1e-12)
    assert row["predicted_productive_chip_s"] == pytest.approx(productive * 4, rel=1e-12)
    assert row["predicted_gain_chip_s"] == pytest.approx((advised - productive) * 4, rel=1e-9)
    assert row["rg_predicted"] == pytest.approx(productive / 5640, rel=1e-12)
    # Against the ledger's lost 3600 + save 720 chip-s, the model expects 2267 + 898 of a job
    # like this (one interruption is one draw, not an average); at the advised setting it
    # expects 147 chip-s more productive, but one interruption is too few to act on: the job
    # keeps its interval and is credited with no saving.
    assert (round(lost * 4), round(saves * 4), round(productive * 4)) == (2267, 898, 17951)
    assert round((advised - productive) * 4) == 147
    assert (row["advice"], row["chip_hours_saved"]) == ("too_few_interruptions", 0)
    assert row["advised_productive_chip_s"] == row["predicted_productive_chip_s"]
    assert row["rg_advised"] == row["rg_predicted"]


def test_first_order_limit_and_jobs_the_model_cannot_advise() -> None:
    # With rare interruptions the closed form is Young's first order: lost per interruption
    # s (x^2 / 2 + x delta) / (x + delta), saves delta / (x + delta) of the running time.
    lam = 1e-7
    lost, saves, _ = _predicted(lam, 60, 1.0, 1e6, 1200)
    assert lost / (lam * 1e6) == pytest.approx((1200**2 / 2 + 1200 * 60) / 1260, rel=1e-4)
    assert saves / 1e6 == pytest.approx(60 / 1260, rel=1e-4)

    scheduler, runtime = _job("c")
    serving = [
        submit("s", "00:00", 1, cls="serving"),
        schedule("s", "00:00", 0, 1),
        end("s", "01:00"),
    ]
    # "u": never interrupted; "n": never saves.
    unbroken = [submit("u", "00:00", 2), schedule("u", "00:00", 0, 2), end("u", "01:00")]
    unbroken_spans = [
        span("u", "step", "00:00", "00:20", step=1),
        span("u", "checkpoint_save", "00:20", "00:21", step=1),
        span("u", "step", "00:21", "00:41", step=2),
    ]
    unsaved = [submit("n", "00:00", 2), schedule("n", "00:00", 0, 2), end("n", "01:00")]
    rows = checkpoint_advice(
        sweep(
            scheduler + serving + unbroken + unsaved,
            runtime + unbroken_spans + [span("n", "step", "00:00", "00:30", step=1)],
        )
    )
    assert rows.schema == CHECKPOINT_ADVICE
    by = {r["job_id"]: r for r in rows.to_pylist()}
    assert sorted(by) == ["c", "n", "u"]  # training jobs only
    u = by["u"]
    assert (u["interruptions"], u["mtbi_s"], u["advised_interval_s"]) == (0, None, None)
    # No interruption: nothing lost, the saves take delta / (x + delta) of the running time.
    assert (u["predicted_lost_chip_s"], u["observed_interval_s"]) == (0, 1200)
    assert u["predicted_save_chip_s"] == pytest.approx(3600 * 60 / 1260 * 2, rel=1e-12)
    assert (u["advice"], u["chip_hours_saved"]) == ("no_interruptions", 0)
    assert u["rg_advised"] == u["rg_predicted"]
    n = by["n"]
    assert (n["saves"], n["mean_save_s"], n["observed_interval_s"]) == (0, None, None)
    assert (n["predicted_productive_chip_s"], n["rg_predicted"], n["rg"]) == (None, None, 0.5)
    assert (n["predicted_lost_chip_s"], n["predicted_save_chip_s"]) == (None, None)
    assert (n["advice"], n["chip_hours_saved"]) == ("no_saves", 0)


def test_no_training_job_no_advice() -> None:
    serving = sweep([submit("s", "00:00", 1, cls="serving"), schedule("s", "00:00", 0, 1)])
    advice = checkpoint_advice(serving)
    assert (advice.num_rows, advice.schema) == (0, CHECKPOINT_ADVICE)
    assert checkpoint_advice_by_slice(advice).num_rows == 0


def test_the_slice_roll_up_is_ratios_of_sums() -> None:
    scheduler, runtime = _job("c")
    other_s, other_r = _job("d", chips=8, gen="gpu-h100")
    advice = checkpoint_advice(sweep(scheduler + other_s, runtime + other_r))
    slices = checkpoint_advice_by_slice(advice)
    assert slices.schema == CHECKPOINT_ADVICE_BY_SLICE
    rows = {
        (r["chip_generation"], r["framework"], r["workload_class"]): r for r in slices.to_pylist()
    }
    assert len(rows) == 3 * 2 * 2  # (all, tpu-v5p, gpu-h100) x (all, jax) x (all, training)
    fleet = rows[(None, None, None)]
    # Two copies of the same timeline: 2 interruptions in 2 x 5640 s, 6 saves of 60 s, ...
    assert (fleet["jobs"], fleet["interruptions"], fleet["all_allocated_s"]) == (2, 2, 11280)
    assert (fleet["mtbi_s"], fleet["mean_save_s"], fleet["mean_restart_s"]) == (5640, 60, 180)
    assert (fleet["observed_interval_s"], fleet["interruptions_per_hour"]) == (1200, 7200 / 11280)
    assert fleet["advised_interval_s"] == math.sqrt(2 * 60 * 5640)
    # ... and RGs weighted by chips: (4 + 8) x 4200 productive of (4 + 8) x 5640 allocated.
    assert fleet["rg"] == pytest.approx(4200 / 5640, rel=1e-15)
    per_job = {r["job_id"]: r for r in advice.to_pylist()}
    assert fleet["rg_predicted"] == pytest.approx(per_job["c"]["rg_predicted"], rel=1e-12)
    assert fleet["chip_hours_saved"] == (
        per_job["c"]["chip_hours_saved"] + per_job["d"]["chip_hours_saved"]
    )
    assert rows[("gpu-h100", "jax", "training")]["jobs"] == 1


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


def _advise(jobs: list[CheckpointJob], seed: int, days: float = 7) -> list[dict]:
    fleet = checkpoint_fleet(jobs, days=days, seed=seed)
    swept = sweep_chip_time(fleet.scheduler, fleet.runtime, fleet.profiles, fleet.data_end_us)
    return checkpoint_advice(swept).to_pylist()


def _waste(rows: list[dict]) -> float:
    """Lost progress and save time, as a share of all-allocated chip-time."""
    lost = sum(r["lost_progress_chip_s"] + r["checkpoint_save_chip_s"] for r in rows)
    return lost / sum(r["all_allocated_chip_s"] for r in rows)


def test_the_model_predicts_the_ledger_and_its_advice_loses_less() -> None:
    jobs, seed = _fleet(40, seed=3), 3
    observed = _advise(jobs, seed)
    by = {r["job_id"]: r for r in observed}
    # The rates the fleet was drawn with come back out.
    for job in jobs:
        row = by[job.job_id]
        assert row["mean_save_s"] == pytest.approx(job.save_s, rel=1e-6)
        assert row["observed_interval_s"] == pytest.approx(
            job.checkpoint_every * job.step_s, rel=1e-6
        )
        if row["interruptions"] >= 20:  # Poisson: within ~3 standard deviations, 3 / sqrt(20)
            assert row["interruptions_per_hour"] == pytest.approx(job.interrupts_per_hour, rel=0.7)
    # Lost progress + save time: the fleet's within 5% of the ledger (one job's, over a week, is
    # a sum of a few dozen random draws: see the next test).
    ledger = sum(r["lost_progress_chip_s"] + r["checkpoint_save_chip_s"] for r in observed)
    predicted = sum(r["predicted_lost_chip_s"] + r["predicted_save_chip_s"] for r in observed)
    assert predicted == pytest.approx(ledger, rel=0.05)

    # The same fleet, same interruptions, each job saving at its advised interval.
    advised = _advise(
        [
            replace(
                j, checkpoint_every=max(1, round(by[j.job_id]["advised_interval_s"] / j.step_s))
            )
            for j in jobs
        ],
        seed,
    )
    allocated = [r["all_allocated_chip_s"] for r in observed]
    assert [r["all_allocated_chip_s"] for r in advised] == pytest.approx(allocated, rel=1e-12)
    assert _waste(advised) < 0.75 * _waste(observed)
    # And the RG it then gets is the one the model advised it would, within a point.
    replayed = sum(r["productive_chip_s"] for r in advised) / sum(allocated)
    promised = sum(r["advised_productive_chip_s"] for r in observed) / sum(allocated)
    assert replayed == pytest.approx(promised, abs=0.01)


def test_each_jobs_loss_is_predicted_once_it_has_hundreds_of_interruptions() -> None:
    # 120 days at 0.1 to 1 interruptions an hour: 250 to 3,000 interruptions a job, so one job's
    # lost progress + save time is predicted within 10% (its own noise is a few per cent).
    observed = _advise(_fleet(6, seed=11, rate=(0.1, 1.0), step=(200, 300)), 11, days=120)
    for r in observed:
        assert r["interruptions"] >= 250
        expected = r["lost_progress_chip_s"] + r["checkpoint_save_chip_s"]
        assert r["predicted_lost_chip_s"] + r["predicted_save_chip_s"] == pytest.approx(
            expected, rel=0.10
        ), r["job_id"]
        assert r["rg_predicted"] == pytest.approx(r["rg"], abs=0.02), r["job_id"]
