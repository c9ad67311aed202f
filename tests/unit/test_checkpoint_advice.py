"""Checkpoint advice (`mpg.transforms.checkpoints`, `mpg.transforms.interruptions`) on named
timelines: what a job did (each number derived in a comment), its interruptions counted once
from attempts and scheduler, the model's predictions recomputed here by the closed form with
Python's math, MTBI's interval against the Poisson tails it is defined by. Fleets with known
interruptions are in tests/unit/test_checkpoint_fleets.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpg.schemas import CHECKPOINT_ADVICE, CHECKPOINT_ADVICE_BY_SLICE
from mpg.transforms.checkpoints import (
    CONFIDENCE,
    checkpoint_advice,
    poisson_interval,
)
from tests.support.checkpoint_fleets import advice_by_slice
from tests.support.timeline import end, release, schedule, span, submit, sweep


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
    # One interruption: the rates under which 1 or more, or at most 1, has 5% are 0.0513 and
    # 4.74 in 5640 s (test_mtbi_interval_is_the_exact_poisson_one), so MTBI is 1,189 to 109,956 s
    # and the advised interval 378 to 3,632 s. Were MTBI at its low end the advised step would
    # gain 3,057 chip-s; at its high end it would lose 857: the advice does not hold across it.
    (low,), (high,) = poisson_interval(np.array([1]))
    assert (row["mtbi_low_s"], row["mtbi_high_s"], row["confidence"]) == (
        5640 / high,
        5640 / low,
        0.9,
    )
    assert (round(row["mtbi_low_s"]), round(row["mtbi_high_s"])) == (1189, 109956)
    assert row["advised_interval_low_s"] == pytest.approx(
        math.sqrt(2 * 60 * 5640 / high), rel=1e-12
    )
    assert row["advised_interval_high_s"] == pytest.approx(
        math.sqrt(2 * 60 * 5640 / low), rel=1e-12
    )
    for column, rate in (("low", high / 5640), ("high", low / 5640)):
        gain = _predicted(rate, 60, 1.0, 5280, 600)[2] - _predicted(rate, 60, 1.0, 5280, 1200)[2]
        assert row[f"predicted_gain_at_mtbi_{column}_chip_s"] == pytest.approx(gain * 4, rel=1e-9)
    assert round(row["predicted_gain_at_mtbi_low_chip_s"]) == 3057
    assert round(row["predicted_gain_at_mtbi_high_chip_s"]) == -857


def _attempt(job: str, attempt: int, begin: str, stop: str, step: int) -> list[dict]:
    """An attempt: a minute of init, then one step until `stop`."""
    h, m = begin.split(":")
    after_init = f"{h}:{int(m) + 1:02d}"
    return [
        span(job, "init", begin, after_init, attempt=attempt),
        span(job, "step", after_init, stop, step=step, attempt=attempt),
    ]


def test_interruptions_are_counted_once_from_attempts_and_scheduler() -> None:
    """Each job's interruptions by hand: scheduler events, attempts, and both."""
    gang = [  # two tasks of 2 chips
        submit("g", "00:00", 4), schedule("g", "00:00", 0, 2), schedule("g", "00:00", 1, 2),
        # 1: both tasks evicted at one instant, logged 2 s after attempt 0's last span ended
        release("g", "01:00:02", 0), release("g", "01:00:02", 1),
        schedule("g", "01:10", 0, 2), schedule("g", "01:10", 1, 2),
        # 2: evicted one after the other (one stretch ends: one interruption)
        release("g", "02:00", 0), release("g", "02:00:30", 1),
        schedule("g", "02:10", 0, 2), schedule("g", "02:10", 1, 2),
        # 3: a crash during init before any span, attempt number not used up: scheduler only
        release("g", "02:15", 0, "TASK_FAIL"), schedule("g", "02:20", 0, 2),
        # 4: attempt 2 restarts in place at 03:00 as attempt 3: attempts only
        # 5: a machine lost
        release("g", "04:00", 1, "TASK_LOST"), schedule("g", "04:10", 1, 2),
        release("g", "05:00", 0, "TASK_FINISH"), release("g", "05:00", 1, "TASK_FINISH"),
        end("g", "05:00"),
    ]  # fmt: skip
    gang_spans = (
        _attempt("g", 0, "00:00", "01:00", 1) + _attempt("g", 1, "01:10", "02:00", 1)
        + _attempt("g", 2, "02:20", "03:00", 1) + _attempt("g", 3, "03:00", "04:00", 1)
        + _attempt("g", 4, "04:10", "05:00", 1)
    )  # fmt: skip
    others = [
        # f: a failure that ended the job, FAILED a minute later: none
        submit("f", "00:00", 2), schedule("f", "00:00", 0, 2),
        release("f", "01:00", 0, "TASK_FAIL"), end("f", "01:01", "FAILED"),
        # c: evicted, then cancelled while it waited: none
        submit("c", "00:00", 2), schedule("c", "00:00", 0, 2),
        release("c", "01:00", 0), end("c", "02:00", "CANCELLED"),
        # o: evicted, still waiting when the data ends (05:00): one, scheduler only
        submit("o", "00:00", 2), schedule("o", "00:00", 0, 2), release("o", "01:00", 0),
        # x: attempt 0 crashed in init, no span; attempt 1 ran: one, its number shows it
        submit("x", "00:00", 2), schedule("x", "00:00", 0, 2),
        release("x", "00:01", 0, "TASK_FAIL"), schedule("x", "00:05", 0, 2), end("x", "01:00"),
        # y: the same, the runtime numbering the attempt that ran 0: one, scheduler only
        submit("y", "00:00", 2), schedule("y", "00:00", 0, 2),
        release("y", "00:01", 0, "TASK_FAIL"), schedule("y", "00:05", 0, 2), end("y", "01:00"),
        # z: attempt 0 failed, its task given its chips back at the same instant: one; its next
        # incarnation crashes in init the same way, no span, not numbered: one more, scheduler
        # only; attempt 1 begins the instant it gets its chips back
        submit("z", "00:00", 2), schedule("z", "00:00", 0, 2),
        release("z", "00:30", 0, "TASK_FAIL"), schedule("z", "00:30", 0, 2),
        release("z", "00:32", 0, "TASK_FAIL"), schedule("z", "00:32", 0, 2), end("z", "01:00"),
        # t: one task of two done early, the job goes on below its chips: none
        submit("t", "00:00", 4), schedule("t", "00:00", 0, 2), schedule("t", "00:00", 1, 2),
        release("t", "00:30", 1, "TASK_FINISH"), end("t", "01:00"),
    ]  # fmt: skip
    other_spans = (
        _attempt("f", 0, "00:00", "01:00", 1) + _attempt("c", 0, "00:00", "01:00", 1)
        + _attempt("o", 0, "00:00", "01:00", 1) + _attempt("x", 1, "00:05", "01:00", 1)
        + _attempt("y", 0, "00:05", "01:00", 1) + _attempt("t", 0, "00:00", "01:00", 1)
        + _attempt("z", 0, "00:00", "00:30", 1) + _attempt("z", 1, "00:32", "01:00", 1)
    )  # fmt: skip
    rows = checkpoint_advice(sweep(gang + others, gang_spans + other_spans)).to_pylist()
    counts = {
        r["job_id"]: (r["interruptions"], r["interruptions_from_scheduler_only"]) for r in rows
    }
    assert counts == {
        "g": (5, 1), "f": (0, 0), "c": (0, 0), "o": (1, 1), "x": (1, 0), "y": (1, 1),
        "t": (0, 0), "z": (2, 1),
    }  # fmt: skip
    # g all-allocated: 00:00-01:00:02, 01:10-02:00, 02:10-02:15, 02:20-04:00, 04:10-05:00
    g = next(r for r in rows if r["job_id"] == "g")
    assert g["all_allocated_s"] == 3602 + 3000 + 300 + 6000 + 3000
    assert g["mtbi_s"] == 15902 / 5


def test_mtbi_interval_is_the_exact_poisson_one() -> None:
    """Its ends are the rates under which a count as high (as low) as the one seen has 5% (the
    Poisson tails summed here term by term); and it covers the true rate at least 90% of the
    time whatever that rate (Garwood's guarantee), here exactly over a grid of rates."""
    counts = np.arange(0, 40)
    low, high = poisson_interval(counts)

    def at_most(n: int, rate: float) -> float:
        return sum(math.exp(-rate) * rate**i / math.factorial(i) for i in range(n + 1))

    tail = (1 - CONFIDENCE) / 2
    for n, lo, hi in zip(counts, low, high, strict=True):
        assert at_most(int(n), hi) == pytest.approx(tail, rel=1e-9)
        if n == 0:
            assert lo == 0
        else:
            assert 1 - at_most(int(n) - 1, lo) == pytest.approx(tail, rel=1e-9)
    # coverage at rate m: the chance of a count whose interval holds m
    many = np.arange(0, 400)
    low, high = poisson_interval(many)
    rates = np.linspace(0.05, 60, 600)
    pmf = np.exp(-rates[:, None] + many * np.log(rates[:, None]) - _log_factorial(many))
    held = (low <= rates[:, None]) & (rates[:, None] <= high)
    coverage = (pmf * held).sum(axis=1)
    assert coverage.min() >= CONFIDENCE
    assert coverage.min() == pytest.approx(0.9, abs=0.01)  # exact at some rates, not wasteful


def _log_factorial(n: np.ndarray) -> np.ndarray:
    return np.array([math.lgamma(k + 1) for k in n])


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
    assert advice_by_slice(advice).num_rows == 0


def test_the_slice_roll_up_is_ratios_of_sums() -> None:
    scheduler, runtime = _job("c")
    other_s, other_r = _job("d", chips=8, gen="gpu-h100")
    advice = checkpoint_advice(sweep(scheduler + other_s, runtime + other_r))
    slices = advice_by_slice(advice)
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
