"""Checkpoint advice: the Young/Daly model of runtime goodput, fitted to each training job's own
sweep, and advice only where that model says the change helps, however sure it can be
(docs/metrics.md, "Checkpoint advice", states the model, the confidence and the rule).

Observed per job, over its records in the run (durations in the job's seconds):
- interruptions N, each once from the attempts and the scheduler (`count_interruptions`), over
  all-allocated time A: a rate per all-allocated hour, MTBI M = A / N, and M's interval at
  `CONFIDENCE` from the exact (Garwood) interval of the Poisson count;
- blocking save time delta: the checkpoint_save time the ledger charges, per save span;
- restart cost R: from an attempt's first span to its first step, for attempts after the first;
- checkpoint interval tau: the work between blocking saves, from the previous save's end (or the
  attempt's first step) to a save's start, averaged over saves; the steps in that work, and so
  the wall time a step takes between saves (`mean_step_s`), which turns an interval in seconds
  into the setting an engineer changes, steps between saves;
- running time W: all-allocated time outside init, compile and checkpoint_restore, and the share
  s of it that steps take when not saving (the rest is data waits and idle gaps).

The model (`_model`) gives the productive time P(x) to expect of the running time at a work
interval x between saves. The advice is Young/Daly's interval sqrt(2 delta M), as a whole number
of steps; it is `change` only where P at that setting beats P at tau for every MTBI in its
interval (checked at both ends and at M), with at least `MIN_INTERRUPTIONS`; the chip-hours it
saves are P(advised) - P(tau) over the job's analysed life, 0 where the advice is not `change`.

    advice = checkpoint_advice(sweep)   # CHECKPOINT_ADVICE

Vectorised: a few group-bys over the sweep's frames, no Python loop per job or span.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from mpg.schemas import CHECKPOINT_ADVICE, conform
from mpg.transforms.account import ChipTimeSweep
from mpg.transforms.chip_time import CHARGED_CATEGORIES, charged_by, seconds
from mpg.transforms.interruptions import count_interruptions

# The level of MTBI's interval, and the fewest interruptions that give an MTBI to advise on: at
# 3 the advised interval's 90% interval is within a factor 2 of it either way (sqrt(3 / 0.818)
# = 1.92, sqrt(7.75 / 3) = 1.61); at 2 it is not (2.37).
CONFIDENCE = 0.9
MIN_INTERRUPTIONS = 3

_STARTUP = ("init", "compile", "checkpoint_restore")
_STEPS = ("kept_step", "lost_step")


def poisson_interval(counts: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, ...]:
    """The exact (Garwood) interval of a Poisson mean at `confidence`, for each observed count:
    the means under which a count this high (low) has probability (1 - confidence) / 2, i.e.
    quantiles of the gamma distribution (chi-square with 2n and 2n + 2 degrees of freedom, over
    2). The lower end is 0 for a count of 0."""
    from scipy.special import gammaincinv  # 0.06 s to import: `run.warm_up` imports it

    n = np.asarray(counts, dtype=np.float64)
    tail = (1 - confidence) / 2
    low = np.where(n > 0, gammaincinv(np.maximum(n, 1), tail), 0.0)
    return low, gammaincinv(n + 1, 1 - tail)


def _count_bound(count: pl.Expr, end: int) -> pl.Expr:
    return count.map_batches(
        lambda s: pl.Series(poisson_interval(s.to_numpy())[end]), return_dtype=pl.Float64
    )


def _first_steps(steps: pl.DataFrame) -> pl.DataFrame:
    """Each attempt's first step start (`steps`: `step_rows`)."""
    return steps.group_by("job_id", "attempt").agg(pl.col("start").min().alias("first_step"))


def _restarts(attempts: pl.DataFrame, first_steps: pl.DataFrame) -> pl.DataFrame:
    """Per job: attempts after the first that reached a step, and their startup time."""
    return (
        attempts.filter(pl.col("attempt") > 0)
        .join(first_steps, on=["job_id", "attempt"])
        .group_by("job_id")
        .agg(
            pl.len().cast(pl.Int64).alias("restarts"),
            (pl.col("first_step") - pl.col("first_start")).sum().alias("restart_us"),
        )
    )


def _saves(spans: pl.DataFrame, steps: pl.DataFrame, first_steps: pl.DataFrame) -> pl.DataFrame:
    """Per job: save spans, the work intervals before them (from the previous save's end in
    the attempt, or the attempt's first step; a save before any step has none) and the steps
    in those intervals (each (attempt, step) once, whatever ranks report it: `steps` is
    `step_rows`)."""
    saves = (
        spans.filter(pl.col("kind") == "checkpoint_save")
        .sort("job_id", "attempt", "start", "end")
        .join(first_steps, on=["job_id", "attempt"], how="left", maintain_order="left")
        .with_columns(
            pl.coalesce(pl.col("end").shift(1).over("job_id", "attempt"), "first_step").alias(
                "anchor"
            )
        )
        .with_columns((pl.col("start") - pl.col("anchor")).alias("interval_us"))
    )
    measured = saves.filter(pl.col("interval_us") > 0).select(
        "job_id", "attempt", pl.col("anchor"), pl.col("start").alias("save_start")
    )
    # each step with the first measured save that starts after it, counted where it lies in
    # that save's interval
    counted = (
        steps.select("job_id", "attempt", "start")
        .sort("start")
        .join_asof(
            measured.sort("save_start"),
            left_on="start",
            right_on="save_start",
            by=["job_id", "attempt"],
            strategy="forward",
            check_sortedness=False,  # both sorted by time above, so within each attempt too
        )
        .filter(pl.col("start") >= pl.col("anchor"))
        .group_by("job_id")
        .agg(pl.len().cast(pl.Int64).alias("interval_steps"))
    )
    positive = pl.col("interval_us") > 0
    return (
        saves.group_by("job_id")
        .agg(
            pl.len().cast(pl.Int64).alias("saves"),
            positive.sum().cast(pl.Int64).alias("intervals"),
            pl.col("interval_us").filter(positive).sum().alias("interval_us"),
        )
        .join(counted, on="job_id", how="left")
    )


def _model(x: pl.Expr, lam: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(lost progress, completed save time, productive time), in chip-seconds, that the model
    expects of the job's running time at work interval `x` (seconds) between saves, with
    interruptions at rate `lam` per all-allocated second.

    One that strikes the running time falls at phase u of the period p = x + delta, u
    truncated-exponential on [0, p) (memorylessness). It loses the steps since the last save,
    s min(u, x), and a save it cuts short (u > x) is not durable. Per unit of running time, with
    q = exp(-lam p):
        completed saves  lam delta q / (1 - q)
        lost steps       lam s E[min(u, x)]
        cut saves        lam (E[u] - E[min(u, x)])
    where E[min(u, x)] = ((1 - exp(-lam x)) / lam - x q) / (1 - q) and
    E[u] = 1 / lam - p q / (1 - q). Productive time is the steps' share s of the running time the
    saves leave, less the lost steps. As lam p -> 0 these become
    Young's first-order terms, delta / p and lam s (x^2 / 2 + x delta) / p; at lam = 0 they are
    exactly delta / p, 0 and 0."""
    delta, share = pl.col("mean_save_s"), pl.col("step_share")
    period = x + delta
    q = (-lam * period).exp()
    mean_min = ((1 - (-lam * x).exp()) / lam - x * q) / (1 - q)
    mean_phase = 1 / lam - period * q / (1 - q)
    interrupted = lam > 0
    saves = pl.when(interrupted).then(lam * delta * q / (1 - q)).otherwise(delta / period)
    lost = pl.when(interrupted).then(lam * share * mean_min).otherwise(0.0)
    cut = pl.when(interrupted).then(lam * (mean_phase - mean_min)).otherwise(0.0)
    scale = pl.col("running_s") * pl.col("chips_requested")
    productive = share * (1 - saves - cut) - lost
    modelled = x.is_not_null() & delta.is_not_null() & share.is_not_null()
    lost, saves, productive = (pl.when(modelled).then(e * scale) for e in (lost, saves, productive))
    return lost, saves, productive


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator)


def _observed(sweep: ChipTimeSweep) -> pl.DataFrame:
    """One row per training job with time in the run: what it did, in seconds and chip-seconds."""
    jobs = sweep.jobs.filter(pl.col("workload_class") == "training")
    first_steps = _first_steps(sweep.steps)
    days = sweep.charged.group_by("job_id").agg(
        pl.col("day").min().alias("first_day"), pl.col("day").max().alias("last_day")
    )
    chips = pl.col("chips_requested")
    allocated = pl.sum_horizontal(*(c for c in CHARGED_CATEGORIES if c != "scheduling"))
    counts = ("interruptions", "interruptions_from_scheduler_only", "restarts", "saves")
    return (
        jobs.join(days, on="job_id")
        .join(charged_by(sweep.charged, ["job_id"]), on="job_id")
        .join(count_interruptions(sweep), on="job_id", how="left")
        .join(_restarts(sweep.attempts, first_steps), on="job_id", how="left")
        .join(_saves(sweep.spans, sweep.steps, first_steps), on="job_id", how="left")
        .with_columns(
            pl.col(*counts, "intervals", "interval_steps").fill_null(0),
            seconds(pl.col("restart_us").fill_null(0)).alias("restart_s"),
            seconds(pl.col("interval_us").fill_null(0)).alias("interval_s"),
            seconds(pl.col("wanted_end_us") - pl.col("submit_us")).alias("wanted_s"),
            allocated.alias("all_allocated_chip_s"),
            pl.col("kept_step").alias("productive_chip_s"),
            pl.col("lost_step").alias("lost_progress_chip_s"),
            pl.col("checkpoint_save").alias("checkpoint_save_chip_s"),
        )
        .with_columns(
            pl.col("wanted_s").alias("analysed_s"),
            (pl.col("all_allocated_chip_s") / chips).alias("all_allocated_s"),
            ((pl.col("all_allocated_chip_s") - pl.sum_horizontal(*_STARTUP)) / chips).alias(
                "running_s"
            ),
            (pl.sum_horizontal(*_STEPS) / chips).alias("step_s"),
            (pl.col("checkpoint_save") / chips).alias("save_s"),
        )
    )


def _rates(observed: pl.DataFrame) -> pl.DataFrame:
    """The job's means, MTBI's interval, and Young/Daly's interval at MTBI and its ends."""
    n, allocated, delta = pl.col("interruptions"), pl.col("all_allocated_s"), pl.col("mean_save_s")
    young = {
        f"advised_interval{end}_s": pl.when((delta > 0) & (n > 0)).then(
            (2 * delta * pl.col(f"mtbi{end}_s")).sqrt()
        )
        for end in ("", "_low", "_high")
    }
    return (
        observed.with_columns(
            _ratio(n * 3600, allocated).alias("interruptions_per_hour"),
            _ratio(allocated, n).alias("mtbi_s"),
            # MTBI's low end is the rate's high end, and its high end the rate's low (none at 0)
            _ratio(allocated, _count_bound(n, 1)).alias("mtbi_low_s"),
            _ratio(allocated, _count_bound(n, 0)).alias("mtbi_high_s"),
            pl.lit(CONFIDENCE).alias("confidence"),
            _ratio(pl.col("save_s"), pl.col("saves")).alias("mean_save_s"),
            _ratio(pl.col("restart_s"), pl.col("restarts")).alias("mean_restart_s"),
            _ratio(pl.col("interval_s"), pl.col("intervals")).alias("observed_interval_s"),
            _ratio(pl.col("interval_s"), pl.col("interval_steps")).alias("mean_step_s"),
            _ratio(pl.col("interval_steps"), pl.col("intervals")).alias("observed_interval_steps"),
            _ratio(pl.col("step_s"), pl.col("running_s") - pl.col("save_s")).alias("step_share"),
        )
        .with_columns(**young)
        .with_columns(
            (pl.col("advised_interval_s") / pl.col("mean_step_s"))
            .round()
            .clip(lower_bound=1)
            .cast(pl.Int64)
            .alias("advised_interval_steps")
        )
    )


def _advice(rates: pl.DataFrame) -> pl.DataFrame:
    """The model at the observed interval and at the advised setting (its steps at the job's
    step time), at MTBI and at both ends of its interval; the advice, and what it saves."""
    n, allocated = pl.col("interruptions"), pl.col("all_allocated_s")
    # The three rates are columns before the models use them: each model names its rate about
    # ten times, and an expression would call the Poisson bound's Python function at each.
    rates = rates.with_columns(
        _ratio(n, allocated).fill_null(0.0).alias("rate"),
        (_count_bound(n, 1) / allocated).alias("rate_at_mtbi_low"),
        (_count_bound(n, 0) / allocated).alias("rate_at_mtbi_high"),
    )
    lam = {end: pl.col(f"rate{end}") for end in ("", "_at_mtbi_low", "_at_mtbi_high")}
    observed, setting = pl.col("observed_interval_s"), pl.col("advised_setting_s")
    gains = {
        f"predicted_gain{end}_chip_s": _model(setting, rate)[2] - _model(observed, rate)[2]
        for end, rate in lam.items()
    }
    lost, saves, productive = _model(observed, lam[""])
    wins = pl.all_horizontal(pl.col(g) > 0 for g in gains).fill_null(False)
    same_setting = pl.col("advised_interval_steps") == pl.col("observed_interval_steps").round()
    advice = (
        pl.when(pl.col("predicted_productive_chip_s").is_null() | ~(pl.col("mean_save_s") > 0))
        .then(pl.lit("no_saves"))
        .when(n == 0)
        .then(pl.lit("no_interruptions"))
        .when(n < MIN_INTERRUPTIONS)
        .then(pl.lit("too_few_interruptions"))
        .when(wins & ~same_setting.fill_null(False))
        .then(pl.lit("change"))
        .otherwise(pl.lit("keep"))
    )
    change = pl.col("advice") == "change"
    return (
        rates.with_columns(
            pl.coalesce(
                pl.col("advised_interval_steps") * pl.col("mean_step_s"), "advised_interval_s"
            ).alias("advised_setting_s"),
            lost.alias("predicted_lost_chip_s"),
            saves.alias("predicted_save_chip_s"),
            productive.alias("predicted_productive_chip_s"),
        )
        .with_columns(**gains)
        .with_columns(advice.alias("advice"))
        .with_columns(
            pl.when(change)
            .then(pl.col("predicted_productive_chip_s") + pl.col("predicted_gain_chip_s"))
            .otherwise(pl.col("predicted_productive_chip_s"))
            .alias("advised_productive_chip_s"),
            pl.when(change)
            .then(seconds(pl.col("predicted_gain_chip_s"), per=3600))
            .otherwise(0.0)
            .alias("chip_hours_saved"),
            _ratio(pl.col("productive_chip_s"), pl.col("all_allocated_chip_s")).alias("rg"),
            _ratio(pl.col("predicted_productive_chip_s"), pl.col("all_allocated_chip_s")).alias(
                "rg_predicted"
            ),
        )
        .with_columns(
            _ratio(pl.col("advised_productive_chip_s"), pl.col("all_allocated_chip_s")).alias(
                "rg_advised"
            ),
        )
    )


def checkpoint_advice(sweep: ChipTimeSweep) -> pa.Table:
    """CHECKPOINT_ADVICE for the training jobs of a sweep.

    A job with no blocking save after a step has no model (its interval and every prediction
    are null, advice `no_saves`); one with no interruption has no advised interval (the model's
    optimum is to save never); one with fewer than MIN_INTERRUPTIONS has one, with its interval,
    and no advice to act on. Only `change` saves chip-hours.
    """
    advice = _advice(_rates(_observed(sweep))).with_columns(pl.col("last_day").alias("day"))
    return conform(advice.sort("job_id").to_arrow(), CHECKPOINT_ADVICE)
