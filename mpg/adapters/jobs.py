"""The job an adapter's records belong to, when its input says less than the spec needs.

Runtime logs and profiler captures name no chip count or chip generation, and no scheduler saw
them. A user who has no scheduler trace for such a job passes `--chips` and `--chip-generation`,
and the adapter synthesizes the job's scheduler events: `JOB_SUBMIT` and one `TASK_SCHEDULE` of
every chip at the job's first record, and `JOB_END` at its last when the input says how it ended.
The job then holds all its chips for all the time it wants them: its SG is 1 by construction,
which measures nothing about scheduling (docs/adapters/README.md says so). Without the two
options no scheduler events are written, and the job's own scheduler trace must supply them. The
options themselves are declared and checked in `mpg.adapters.arguments`.
"""

from __future__ import annotations

import polars as pl

from mpg.adapters.arguments import JobOptions
from mpg.adapters.canonical import UTC_TIME, scheduler_events
from mpg.definitions.vocabulary import JOB_STATES

# The frame `synthesized_scheduler` takes: one row per job.
JOB_EXTENT_SCHEMA = {"job_id": pl.String, "first": UTC_TIME, "last": UTC_TIME, "state": pl.String}


def synthesized_scheduler(jobs: pl.DataFrame, opts: JobOptions) -> pl.DataFrame:
    """Scheduler events giving each job of `jobs` (JOB_EXTENT_SCHEMA) every chip from `first`,
    until `last` where `state` says how it ended, else until the end of the data."""
    if opts.chips is None or opts.chip_generation is None:
        raise ValueError("synthesized_scheduler needs --chips and --chip-generation")
    for state in jobs.get_column("state").drop_nulls().unique():
        if state not in JOB_STATES:
            raise ValueError(f"not a job state: {state}")
    submit = jobs.select(
        pl.col("first").alias("ts"),
        "job_id",
        pl.lit(opts.chips).alias("chips_requested"),
        pl.lit(opts.chip_generation).alias("chip_generation"),
        pl.lit(opts.workload_class).alias("workload_class"),
        pl.lit(opts.framework).alias("framework"),
    )
    schedule = jobs.select(
        pl.col("first").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
        pl.lit(opts.chips).alias("chips"),
    )
    end = jobs.filter(pl.col("state").is_not_null()).select(
        pl.col("last").alias("ts"), "job_id", "state"
    )
    return scheduler_events(submits=submit, schedules=schedule, ends=end)


def allocation_spans(allocations: pl.DataFrame) -> pl.DataFrame:
    """Runtime spans for a cluster trace, which records when a job held its chips and nothing of
    what it did: each allocation (`job_id`, `attempt`, `start`, `end`) becomes one `step` span
    of that attempt, with no checkpoint. By the spec's rule only the last attempt of a job that
    finished (or has not ended) keeps its progress; earlier attempts' time is lost progress. RG
    then says how much allocated time went to attempts that were thrown away
    (docs/adapters/README.md)."""
    return allocations.select(
        "job_id", "attempt", pl.lit("step").alias("kind"), "start", "end", pl.lit(0).alias("step")
    )
