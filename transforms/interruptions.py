"""Interruptions of a job, counted once from the two records that report them: the runtime's
attempts and the scheduler's failures and preemptions (docs/metrics.md, "Checkpoint advice").

- **From the attempts**: every attempt followed by a later one ended in an interruption (the
  program restarted). A restart the scheduler never saw (the program restarted in place on the
  chips it held) is known only from here.
- **From the scheduler**: a `TASK_FAIL`, `TASK_EVICT` or `TASK_LOST` at an instant where the job
  stops holding all its chips (it ends an all-allocated stretch) while the job goes on: it holds
  all its chips again later, or it did not end `FAILED` or `CANCELLED` (it finished later, or is
  still open at the end of the data). A failure the job never came back from, that ended it, is
  not an interruption. A gang whose tasks are evicted at one instant, or one after the other,
  ends one stretch: one interruption. An attempt that crashed before writing any span (during
  init) is known only from here.

**Matching.** A job's attempts, in the order they start, cut its timeline into windows: before
the first attempt's first span; from each attempt's first span to the next one's (a boundary);
and from the last attempt's first span on. A boundary is one interruption or more: it counts
max(1, k) where k scheduler interruptions fall in its window (the eviction that ended the
attempt, and any crash of an attempt that wrote no span before the next one started). Scheduler
interruptions before the first span or in the last attempt's window have no boundary to match
and count one each. Windows run from first span to first span, not from an attempt's last span,
so a scheduler clock a little ahead of or behind the runtime's still matches. Attempt numbers
are not counted: an export may hold only some of a job's attempts.

    counts = count_interruptions(sweep)   # job_id, interruptions, ..._from_scheduler_only

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
    a wanted job while it goes on (the scheduler's interruptions)."""
    jobs = sweep.jobs.select("job_id", "chips_requested", "submit_us", "wanted_end_us", "end_state")
    full_before = pl.col("before") >= pl.col("chips_requested")
    full_after = pl.col("after") >= pl.col("chips_requested")
    starts = pl.when(full_after & ~full_before).then(pl.col("t"))
    held = (
        sweep.allocation.group_by("job_id", "t")
        .agg(pl.col("held").sum())
        .sort("job_id", "t")
        .with_columns(pl.col("held").cum_sum().over("job_id").alias("after"))
        .with_columns((pl.col("after") - pl.col("held")).alias("before"))
        .join(jobs, on="job_id")
        # the next instant, after this one, where the job again holds all its chips
        .with_columns(starts.alias("start"))
        .with_columns(pl.col("start").shift(-1).backward_fill().over("job_id").alias("resumed"))
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
            full_before
            & ~full_after
            & (pl.col("t") > pl.col("submit_us"))
            & (pl.col("t") < pl.col("wanted_end_us"))
            & goes_on
        )
        .join(failures, on=["job_id", "t"], how="semi")
        .select("job_id", "t")
    )


def count_interruptions(sweep: ChipTimeSweep) -> pl.DataFrame:
    """Per job with an interruption: `interruptions` (each once, by the matching rule above),
    `attempt_boundaries` (those the attempts show) and `interruptions_from_scheduler_only`."""
    attempts = (
        sweep.attempts.select("job_id", "first_start")
        .sort("first_start")
        .with_columns(pl.col("first_start").shift(-1).over("job_id").alias("next_start"))
    )
    # Each scheduler interruption in the window of the latest attempt started by then (none
    # before the job's first span).
    windows = (
        stretch_ends(sweep)
        .sort("t")
        .join_asof(
            attempts,
            left_on="t",
            right_on="first_start",
            by="job_id",
            strategy="backward",
            check_sortedness=False,  # both sorted by time above, so within each job too
        )
        .with_columns(pl.col("next_start").is_not_null().alias("at_boundary"))
    )
    at_boundaries = (
        windows.filter("at_boundary")
        .group_by("job_id", "first_start")
        .agg(pl.len().cast(pl.Int64).alias("k"))
    )
    boundaries = (
        attempts.filter(pl.col("next_start").is_not_null())
        .join(at_boundaries, on=["job_id", "first_start"], how="left")
        .group_by("job_id")
        .agg(
            pl.len().cast(pl.Int64).alias("attempt_boundaries"),
            pl.max_horizontal(pl.col("k").fill_null(0), 1).sum().cast(pl.Int64).alias("matched"),
        )
    )
    unmatched = (
        windows.filter(~pl.col("at_boundary"))
        .group_by("job_id")
        .agg(pl.len().cast(pl.Int64).alias("unmatched"))
    )
    counts = boundaries.join(unmatched, on="job_id", how="full", coalesce=True).with_columns(
        pl.col("attempt_boundaries", "matched", "unmatched").fill_null(0)
    )
    total = pl.col("matched") + pl.col("unmatched")
    return counts.select(
        "job_id",
        total.alias("interruptions"),
        "attempt_boundaries",
        (total - pl.col("attempt_boundaries")).alias("interruptions_from_scheduler_only"),
    )
