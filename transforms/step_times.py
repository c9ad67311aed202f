"""Step times and stragglers inside productive time, per job-day (docs/metrics.md, "Step times").

MPG counts a kept step's chip-time as productive however long the step took; these statistics
look inside that time and change no ledger row. A step is one (job, attempt, step number) of the
kept steps in a sweep (`ChipTimeSweep.spans`); where several ranks report it (the optional `rank`
of step spans, docs/trace-format.md), it lasts from the earliest rank's start to the latest rank's
end, as a synchronous step does. A step belongs to the UTC day it starts on (the record store's
day for a span).

Per job-day: the count, mean, median, p90, p99 (linear interpolation, numpy's default) and max
step time; ml-goodput-measurement's ideal step time and step-time deviation (its definitions,
`_ml_goodput_ideal` and `_ml_goodput_deviation`); the chip-time of slow steps, the sum over steps
slower than the day's median of (step time - median) x chips_requested, and its share of the
job-day's productive chip-time. Per rank, over steps that several ranks reported: how often each
rank was the slowest (ties go to the lowest rank).

    stats, stragglers = step_time_stats(sweep)   # STEP_TIME_STATS, STEP_RANK_STRAGGLERS

Vectorised: one group-by per grain, no Python loop per step.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from mpg.schemas import STEP_RANK_STRAGGLERS, STEP_TIME_STATS, conform
from mpg.transforms.account import ChipTimeSweep, utc_day
from mpg.transforms.chip_time import charged_by, seconds

# ml-goodput-measurement 0.2.3 (goodput_utils.py): steps under 1 s are left out of the ideal step
# time; the deviation compares the last 100 steps' p90 with the median of the 1,000 before them.
_ML_GOODPUT_MIN_STEP_S = 1.0
_ML_GOODPUT_MAD_FACTOR = 3
_ML_GOODPUT_RECENT = 100
_ML_GOODPUT_BASELINE = 1000
_ML_GOODPUT_SPIKE_QUANTILE = 0.9


def _kept(spans: pl.DataFrame) -> pl.DataFrame:
    """The kept step spans, with a `rank` column even where the records had none."""
    if "rank" not in spans.columns:
        spans = spans.with_columns(pl.lit(None, pl.Int64).alias("rank"))
    return spans.filter(pl.col("category") == "kept_step")


def kept_steps(steps: pl.DataFrame) -> pl.DataFrame:
    """One row per kept step of `step_rows`: job_id, attempt, step, day, start and end (epoch
    µs, over its ranks), step_s and ranks, in the order of start, attempt and step: each job's
    steps are in that order (what its figures are computed in), the jobs interleaved (a sort by
    the job too costs three times as much)."""
    return (
        steps.filter(pl.col("category") == "kept_step")
        .drop("category")
        .with_columns(seconds(pl.col("end") - pl.col("start")).alias("step_s"), utc_day("start"))
        .sort("start", "attempt", "step")
        .drop("job")
    )


def _ml_goodput_ideal(t: pl.Expr) -> pl.Expr:
    """ml-goodput-measurement's `compute_ideal_step_time`: the mean of the steps of at least 1 s
    that are no slower than their median + 3 x MAD (median absolute deviation, unscaled)."""
    long = t.filter(t >= _ML_GOODPUT_MIN_STEP_S)
    median = long.median()
    mad = (long - median).abs().median()
    return long.filter(long <= median + _ML_GOODPUT_MAD_FACTOR * mad).mean()


def _ml_goodput_deviation(deviation: pl.Expr) -> pl.Expr:
    """ml-goodput-measurement's `compute_step_deviation_from_baseline` (cumulative mode, its
    defaults) over the job-day's per-step deviations |step time - ideal|, in step order: their
    mean under 100 steps; else the p90 of the last 100, less the median of up to 1,000 before
    those once there are 1,100."""
    recent = deviation.tail(_ML_GOODPUT_RECENT).quantile(
        _ML_GOODPUT_SPIKE_QUANTILE, interpolation="linear"
    )
    baseline = deviation.slice(
        -(_ML_GOODPUT_RECENT + _ML_GOODPUT_BASELINE), _ML_GOODPUT_BASELINE
    ).median()
    n = deviation.count()
    return (
        pl.when(n < _ML_GOODPUT_RECENT)
        .then(deviation.mean())
        .when(n < _ML_GOODPUT_RECENT + _ML_GOODPUT_BASELINE)
        .then(recent)
        .otherwise(recent - baseline)
    )


def _quantile(q: float) -> pl.Expr:
    return pl.col("step_s").quantile(q, interpolation="linear")


def _per_job_day(steps: pl.DataFrame, sweep: ChipTimeSweep) -> pl.DataFrame:
    keys = ["job_id", "day"]
    ideal = steps.group_by(keys).agg(_ml_goodput_ideal(pl.col("step_s")).alias("baseline_step_s"))
    productive = charged_by(sweep.charged, keys).select(
        *keys, pl.col("kept_step").alias("productive_chip_s")
    )
    return (
        steps.join(ideal, on=keys, maintain_order="left")
        .join(sweep.jobs.select("job_id", "chips_requested"), on="job_id", maintain_order="left")
        .with_columns((pl.col("step_s") - pl.col("baseline_step_s")).abs().alias("deviation"))
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("chips_requested").first(),
            pl.len().cast(pl.Int64).alias("steps"),
            pl.col("step_s").mean().alias("mean_step_s"),
            _quantile(0.5).alias("median_step_s"),
            _quantile(0.9).alias("p90_step_s"),
            _quantile(0.99).alias("p99_step_s"),
            pl.col("step_s").max().alias("max_step_s"),
            pl.col("baseline_step_s").first(),
            _ml_goodput_deviation(pl.col("deviation")).alias("step_time_deviation_s"),
            # Sorted before summing: the same bits whatever order the steps came in.
            (pl.col("step_s") - pl.col("step_s").median())
            .clip(lower_bound=0.0)
            .sort()
            .sum()
            .alias("slow_step_s"),
            pl.col("ranks").max(),
        )
        .join(productive, on=keys, how="left", maintain_order="left")
        .with_columns(
            (pl.col("slow_step_s") * pl.col("chips_requested")).alias("slow_step_chip_s"),
            pl.col("productive_chip_s").fill_null(0.0),
        )
        .with_columns(
            pl.when(pl.col("productive_chip_s") > 0)
            .then(pl.col("slow_step_chip_s") / pl.col("productive_chip_s"))
            .alias("slow_step_share")
        )
    )


def rank_step_times(spans: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """One row per rank of each kept step that several ranks reported: job_id, day, attempt,
    step, rank, rank_step_s (that rank's own extent) and slowest (whether it was the step's
    slowest rank: the longest, the lowest rank among equals)."""
    shared = steps.filter(pl.col("ranks") > 1).select("job_id", "attempt", "step", "day")
    return (
        _kept(spans)
        .filter(pl.col("rank").is_not_null())
        .join(shared, on=["job_id", "attempt", "step"])
        .group_by("job_id", "day", "attempt", "step", "rank")
        .agg((pl.col("end").max() - pl.col("start").min()).alias("rank_step_us"))
        .with_columns(seconds(pl.col("rank_step_us")).alias("rank_step_s"))
        .sort(
            "job_id",
            "attempt",
            "step",
            pl.col("rank_step_s"),
            "rank",
            descending=[*[False] * 3, True, False],
        )
        .with_columns(
            (pl.int_range(pl.len()).over("job_id", "attempt", "step") == 0).alias("slowest")
        )
    )


def step_time_stats(sweep: ChipTimeSweep) -> tuple[pa.Table, pa.Table]:
    """STEP_TIME_STATS and STEP_RANK_STRAGGLERS for the kept steps of a sweep's jobs."""
    steps = kept_steps(sweep.steps)
    per_rank = rank_step_times(sweep.spans, steps)
    keys = ["job_id", "day"]
    stragglers = (
        per_rank.group_by(*keys, "rank")
        .agg(
            pl.len().cast(pl.Int64).alias("steps"),
            pl.col("slowest").sum().cast(pl.Int64).alias("slowest_steps"),
            pl.col("rank_step_s").sort().mean().alias("mean_step_s"),
        )
        .with_columns((pl.col("slowest_steps") / pl.col("steps")).alias("slowest_share"))
        .sort("day", "job_id", "rank")
    )
    # The job-day's straggler: the rank slowest most often (the lowest among equals), with the
    # share of the job-day's several-rank steps it was slowest in.
    straggler = (
        stragglers.with_columns(
            (pl.col("slowest_steps") / pl.col("slowest_steps").sum().over(keys)).alias(
                "straggler_share"
            )
        )
        .sort(*keys, "slowest_steps", "rank", descending=[False, False, True, False])
        .group_by(keys, maintain_order=True)
        .first()
        .select(*keys, pl.col("rank").alias("straggler_rank"), "straggler_share")
    )
    stats = (
        _per_job_day(steps, sweep)
        .join(straggler, on=keys, how="left", maintain_order="left")
        .sort("day", "job_id")
    )
    return (
        conform(stats.to_arrow(), STEP_TIME_STATS),
        conform(stragglers.to_arrow(), STEP_RANK_STRAGGLERS),
    )
