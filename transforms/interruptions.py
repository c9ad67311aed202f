"""Interruptions of a job, counted once from the two records that report them: the runtime's
attempts and the scheduler's failures and preemptions (docs/metrics.md, "Checkpoint advice").

- **From the attempts**: the spec numbers a job's attempts +1 after each restart, so from one
  attempt to the next in time, `attempt` grows by the interruptions between them (at least 1),
  and a first attempt numbered n > 0 had n before it. A restart the scheduler never saw (the
  program restarted in place on the chips it held) is known only from here.
- **From the scheduler**: a `TASK_FAIL`, `TASK_EVICT` or `TASK_LOST` at an instant where the job
  stops holding all its chips (it ends an all-allocated stretch) while the job goes on: it holds
  all its chips again later, or it did not end `FAILED` or `CANCELLED` (it finished later, or is
  still open at the end of the data). A failure the job never came back from, that ended it, is
  not an interruption. A gang whose tasks are evicted at one instant, or one after the other,
  ends one stretch: one interruption. An attempt that crashed before writing any span (during
  init) is known from here, and from the number it used up where the runtime counts it.

**Matching.** A job's attempts, in the order they start, cut its timeline into windows: before
the first attempt's first span; from each attempt's first span to the next one's (inclusive: an
event at an attempt's first instant ended the attempt before it); and from the last attempt's
first span on. In each window the attempts show some interruptions (the number
gap to the next attempt; the first attempt's number before it; none after the last attempt's
start) and the scheduler some (k); the window counts the larger: the same interruption seen by
both is counted once, and one seen by either alone is counted. Windows run from first span to
first span, not from an attempt's last span, so a scheduler clock a little ahead of or behind
the runtime's still matches.

    counts = count_interruptions(sweep)   # job_id, interruptions, shown_by_attempts, ...

Vectorised: a sort, running sums and an as-of join, no Python loop per job or event.
"""

from __future__ import annotations

import polars as pl

from mpg.transforms.account import ChipTimeSweep

# The releases that interrupt (TASK_FINISH is a task done, not an interruption).
INTERRUPTING_RELEASES = ("TASK_EVICT", "TASK_FAIL", "TASK_LOST")
# End states after which a job that never held its chips again did not go on.
_GAVE_UP = ("FAILED", "CANCELLED")


def stretch_ends(sweep: ChipTimeSweep) -> pl.DataFrame:
    """(job_id, t): the instants where a failure or preemption ends an all-allocated stretch of
    a wanted job while it goes on (the scheduler's interruptions). An instant's releases apply
    before its schedules (the spec), so a task failed and scheduled again at one instant ends a
    stretch too, one that begins again at once."""
    jobs = sweep.jobs.select("job_id", "chips_requested", "submit_us", "wanted_end_us", "end_state")
    requested = pl.col("chips_requested")
    # within an instant, decreases before increases: the least running level is what the job
    # held between that instant's releases and its schedules
    levels = (
        sweep.allocation.sort("job_id", "t", "held")
        .with_columns(pl.col("held").cum_sum().over("job_id").alias("level"))
        .group_by("job_id", "t", maintain_order=True)
        .agg(
            (pl.col("level").first() - pl.col("held").first()).alias("before"),
            pl.col("level").min().alias("least"),
            pl.col("level").last().alias("after"),
        )
        .join(jobs, on="job_id")
    )
    dips = pl.min_horizontal("before", "least") < requested
    starts = pl.when(dips & (pl.col("after") >= requested)).then(pl.col("t"))
    held = levels.with_columns(starts.alias("start")).with_columns(
        # the first instant, from this one on, where the job holds all its chips again
        pl.col("start").backward_fill().over("job_id").alias("resumed")
    )
    failures = (
        sweep.scheduler.filter(pl.col("type").is_in(INTERRUPTING_RELEASES))
        .select("job_id", pl.col("ts").alias("t"))
        .unique()
    )
    goes_on = (pl.col("resumed") < pl.col("wanted_end_us")).fill_null(False) | ~pl.col(
        "end_state"
    ).is_in(_GAVE_UP).fill_null(False)
    return (
        held.filter(
            (pl.col("before") >= requested)
            & (pl.col("least") < requested)
            & (pl.col("t") > pl.col("submit_us"))
            & (pl.col("t") < pl.col("wanted_end_us"))
            & goes_on
        )
        .join(failures, on=["job_id", "t"], how="semi")
        .select("job_id", "t")
    )


def _shown_by_attempts(attempts: pl.DataFrame) -> pl.DataFrame:
    """(job_id, first_start, shown): per window, the interruptions the attempts' numbers show;
    the window before the job's first span has a null `first_start`."""
    windows = (
        attempts.select("job_id", "attempt", "first_start")
        .sort("first_start")
        .with_columns(
            pl.col("first_start", "attempt").shift(-1).over("job_id").name.prefix("next_")
        )
    )
    gap = pl.max_horizontal(pl.col("next_attempt") - pl.col("attempt"), 1)
    return pl.concat(
        [
            windows.select(
                "job_id",
                "first_start",
                pl.when(pl.col("next_first_start").is_not_null())
                .then(gap)
                .otherwise(0)
                .cast(pl.Int64)
                .alias("shown"),
            ),
            windows.group_by("job_id").agg(
                pl.lit(None, pl.Int64).alias("first_start"),
                pl.col("attempt").first().clip(lower_bound=0).cast(pl.Int64).alias("shown"),
            ),
        ],
        how="vertical_relaxed",
    )


def count_interruptions(sweep: ChipTimeSweep) -> pl.DataFrame:
    """Per job with an interruption: `interruptions` (each once, by the matching rule above),
    `shown_by_attempts` and `interruptions_from_scheduler_only` (the rest)."""
    shown = _shown_by_attempts(sweep.attempts)
    starts = shown.filter(pl.col("first_start").is_not_null()).select("job_id", "first_start")
    # each scheduler interruption in the window of the latest attempt started before it (a null
    # first_start: before the job's first span); one at an attempt's very first instant ended
    # the window before it (chips failed and given back at once, as the attempt began)
    seen = (
        stretch_ends(sweep)
        .sort("t")
        .join_asof(
            starts.sort("first_start"),
            left_on="t",
            right_on="first_start",
            by="job_id",
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,  # both sorted by time above, so within each job too
        )
        .group_by("job_id", "first_start")
        .agg(pl.len().cast(pl.Int64).alias("k"))
    )
    windows = shown.join(
        seen, on=["job_id", "first_start"], how="full", coalesce=True, nulls_equal=True
    ).with_columns(pl.col("shown", "k").fill_null(0).cast(pl.Int64))
    counts = windows.group_by("job_id").agg(
        pl.max_horizontal("shown", "k").sum().alias("interruptions"),
        pl.col("shown").sum().alias("shown_by_attempts"),
    )
    return counts.with_columns(
        (pl.col("interruptions") - pl.col("shown_by_attempts")).alias(
            "interruptions_from_scheduler_only"
        )
    )
