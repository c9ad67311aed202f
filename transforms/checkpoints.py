"""Checkpoint advice: the Young/Daly model of runtime goodput, fitted to each training job's own
sweep (docs/metrics.md, "Checkpoint advice", states the model and its assumptions).

Observed per job, over its records in the run (durations in the job's seconds):
- interruptions N: attempt ends other than the job's end (an attempt followed by a later one),
  over all-allocated time A: a rate per all-allocated hour, and MTBI M = A / N;
- blocking save time delta: the checkpoint_save time the ledger charges, per save span;
- restart cost R: from an attempt's first span to its first step, for attempts after the first;
- checkpoint interval tau: the work between blocking saves, from the previous save's end (or the
  attempt's first step) to a save's start, averaged over saves. Wall time between saves is what
  an interruption puts at risk, whatever the step time, and it needs no step count;
- running time W: all-allocated time outside init, compile and checkpoint_restore, and the share
  s of it that steps take when not saving (the rest is data waits and idle gaps).

The model (`_model`): interruptions are a Poisson process in all-allocated time; with saves of
delta after every x of work, one that strikes the running time loses the steps since the last
durable save, and its phase in the period x + delta is truncated-exponential. That gives, in
closed form, the save time, lost progress and productive time P(x) to expect of the job's running
time, and RG(x) = P(x) / A. At the observed tau it predicts the ledger's lost progress and save
time; for rare interruptions it is Young's first-order model, whose optimum is the Young/Daly
interval sqrt(2 delta M) that the advice gives. The chip-hours a day the advice would save are
P(advised) - P(tau), in chip-hours, over the job's wanted days.

    advice = checkpoint_advice(sweep, rates)   # CHECKPOINT_ADVICE, rates: COST_RATES or None

Vectorised: a few group-bys over the sweep's frames, no Python loop per job or span.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa

from mpg.schemas import CHECKPOINT_ADVICE, CHECKPOINT_ADVICE_BY_SLICE, conform
from mpg.sqlfiles import load_sql
from mpg.transforms.account import ChipTimeSweep
from mpg.transforms.chip_time import CHARGED_CATEGORIES, charged_by, seconds

_STARTUP = ("init", "compile", "checkpoint_restore")
_STEPS = ("kept_step", "lost_step")


def _interruptions(attempts: pl.DataFrame) -> pl.DataFrame:
    return attempts.group_by("job_id").agg(
        pl.col("next_start").is_not_null().sum().cast(pl.Int64).alias("interruptions")
    )


def _first_steps(spans: pl.DataFrame) -> pl.DataFrame:
    """Each attempt's first step start."""
    return (
        spans.filter(pl.col("kind") == "step")
        .group_by("job_id", "attempt")
        .agg(pl.col("start").min().alias("first_step"))
    )


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


def _saves(spans: pl.DataFrame, first_steps: pl.DataFrame) -> pl.DataFrame:
    """Per job: save spans, and the work intervals before them (from the previous save's end in
    the attempt, or the attempt's first step; a save before any step has none)."""
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
    measured = pl.col("interval_us") > 0
    return saves.group_by("job_id").agg(
        pl.len().cast(pl.Int64).alias("saves"),
        measured.sum().cast(pl.Int64).alias("intervals"),
        pl.col("interval_us").filter(measured).sum().alias("interval_us"),
    )


def _model(x: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(lost progress, completed save time, productive time), in chip-seconds, that the model
    expects of the job's running time at work interval `x` (seconds) between saves.

    Interruptions strike at rate lam = N / A; one that strikes the running time falls at phase u
    of the period p = x + delta, u truncated-exponential on [0, p) (memorylessness). It loses the
    steps since the last save, s min(u, x), and a save it cuts short (u > x) is not durable. Per
    unit of running time, with q = exp(-lam p):
        completed saves  lam delta q / (1 - q)
        lost steps       lam s E[min(u, x)]
        cut saves        lam (E[u] - E[min(u, x)])
    where E[min(u, x)] = ((1 - exp(-lam x)) / lam - x q) / (1 - q) and
    E[u] = 1 / lam - p q / (1 - q). Productive time is the steps' share s of the running time the
    saves leave, less the lost steps. As lam p -> 0 these become
    Young's first-order terms, delta / p and lam s (x^2 / 2 + x delta) / p; at lam = 0 they are
    exactly delta / p, 0 and 0."""
    delta, share = pl.col("mean_save_s"), pl.col("step_share")
    lam = pl.col("interruptions") / pl.col("all_allocated_s")
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
    first_steps = _first_steps(sweep.spans)
    days = sweep.charged.group_by("job_id").agg(
        pl.col("day").min().alias("first_day"), pl.col("day").max().alias("last_day")
    )
    chips = pl.col("chips_requested")
    allocated = pl.sum_horizontal(*(c for c in CHARGED_CATEGORIES if c != "scheduling"))
    return (
        jobs.join(days, on="job_id")
        .join(charged_by(sweep.charged, ["job_id"]), on="job_id")
        .join(_interruptions(sweep.attempts), on="job_id", how="left")
        .join(_restarts(sweep.attempts, first_steps), on="job_id", how="left")
        .join(_saves(sweep.spans, first_steps), on="job_id", how="left")
        .with_columns(
            pl.col("interruptions", "restarts", "saves", "intervals").fill_null(0),
            seconds(pl.col("restart_us").fill_null(0)).alias("restart_s"),
            seconds(pl.col("interval_us").fill_null(0)).alias("interval_s"),
            seconds(pl.col("wanted_end_us") - pl.col("submit_us")).alias("wanted_s"),
            allocated.alias("all_allocated_chip_s"),
            pl.col("kept_step").alias("productive_chip_s"),
            pl.col("lost_step").alias("lost_progress_chip_s"),
            pl.col("checkpoint_save").alias("checkpoint_save_chip_s"),
        )
        .with_columns(
            (pl.col("all_allocated_chip_s") / chips).alias("all_allocated_s"),
            ((pl.col("all_allocated_chip_s") - pl.sum_horizontal(*_STARTUP)) / chips).alias(
                "running_s"
            ),
            (pl.sum_horizontal(*_STEPS) / chips).alias("step_s"),
            (pl.col("checkpoint_save") / chips).alias("save_s"),
        )
    )


def checkpoint_advice(sweep: ChipTimeSweep, rates: pa.Table | None = None) -> pa.Table:
    """CHECKPOINT_ADVICE for the training jobs of a sweep; dollars from `rates` (COST_RATES)
    where it prices the job's generation, else null.

    A job with no save has no model (its interval and every prediction are null); one with no
    interruption, or no blocking save time, has no advised interval (the model's optimum is to
    save never, or always) and so no savings.
    """
    observed = _observed(sweep)
    delta = pl.col("mean_save_s")
    lost_observed, saves_observed, productive_observed = _model(pl.col("observed_interval_s"))
    _, _, productive_advised = _model(pl.col("advised_interval_s"))
    advice = (
        observed.with_columns(
            _ratio(pl.col("interruptions") * 3600, pl.col("all_allocated_s")).alias(
                "interruptions_per_hour"
            ),
            _ratio(pl.col("all_allocated_s"), pl.col("interruptions")).alias("mtbi_s"),
            _ratio(pl.col("save_s"), pl.col("saves")).alias("mean_save_s"),
            _ratio(pl.col("restart_s"), pl.col("restarts")).alias("mean_restart_s"),
            _ratio(pl.col("interval_s"), pl.col("intervals")).alias("observed_interval_s"),
            _ratio(pl.col("step_s"), pl.col("running_s") - pl.col("save_s")).alias("step_share"),
        )
        .with_columns(
            pl.when(delta > 0)
            .then((2 * delta * pl.col("mtbi_s")).sqrt())
            .alias("advised_interval_s"),
            lost_observed.alias("predicted_lost_chip_s"),
            saves_observed.alias("predicted_save_chip_s"),
            productive_observed.alias("predicted_productive_chip_s"),
        )
        .with_columns(
            productive_advised.alias("advised_productive_chip_s"),
            _ratio(pl.col("productive_chip_s"), pl.col("all_allocated_chip_s")).alias("rg"),
            _ratio(pl.col("predicted_productive_chip_s"), pl.col("all_allocated_chip_s")).alias(
                "rg_predicted"
            ),
        )
        .with_columns(
            _ratio(pl.col("advised_productive_chip_s"), pl.col("all_allocated_chip_s")).alias(
                "rg_advised"
            ),
            _ratio(
                (pl.col("advised_productive_chip_s") - pl.col("predicted_productive_chip_s"))
                / 3600,
                pl.col("wanted_s") / 86_400,
            ).alias("chip_hours_saved_per_day"),
        )
    )
    advice = advice.with_columns(
        pl.col("last_day").alias("day"),
        pl.lit(None, pl.Float64).alias("usd_per_chip_hour"),
        pl.lit(None, pl.Float64).alias("usd_saved_per_day"),
    )
    return priced_advice(conform(advice.sort("job_id").to_arrow(), CHECKPOINT_ADVICE), rates)


def priced_advice(advice: pa.Table, rates: pa.Table | None) -> pa.Table:
    """CHECKPOINT_ADVICE rows with their dollars from `rates` (COST_RATES) where it prices the
    job's generation, else null: applied again to stored rows when prices change."""
    rows = pl.from_arrow(advice).drop("usd_per_chip_hour")
    if rates is None:
        rows = rows.with_columns(pl.lit(None, pl.Float64).alias("usd_per_chip_hour"))
    else:
        prices = pl.from_arrow(rates).select("chip_generation", "usd_per_chip_hour")
        rows = rows.join(prices, on="chip_generation", how="left", maintain_order="left")
    rows = rows.with_columns(
        (pl.col("chip_hours_saved_per_day") * pl.col("usd_per_chip_hour")).alias(
            "usd_saved_per_day"
        )
    )
    return conform(rows.to_arrow(), CHECKPOINT_ADVICE)


def checkpoint_advice_by_slice(advice: pa.Table) -> pa.Table:
    """CHECKPOINT_ADVICE_BY_SLICE from CHECKPOINT_ADVICE rows, by the view of
    `sql/views/checkpoint_advice_by_slice.sql` (the analysts' roll-up, its one definition) on an
    in-memory DuckDB."""
    with duckdb.connect() as con:
        con.execute(load_sql("publish/macros.sql"))
        con.register("checkpoint_advice", advice)
        con.execute(load_sql("views/checkpoint_advice_by_slice.sql"))
        result = con.table("checkpoint_advice_by_slice").to_arrow_table()
    return conform(result, CHECKPOINT_ADVICE_BY_SLICE)
