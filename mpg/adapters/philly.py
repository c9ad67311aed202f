"""`mpg import philly`: Microsoft Philly job logs (ATC'19) as scheduler events and attempt spans.

    mpg import philly trace-data/cluster_job_log --out traces --timezone America/Los_Angeles

Each job becomes `JOB_SUBMIT` at its submission, per attempt a `TASK_SCHEDULE` of task 0 with the
attempt's GPUs and a release at its end, and `JOB_END` at its last attempt's end with the state
its status gives; each attempt that ran is also one runtime `step` span (`allocation_spans`), so
RG is the share of allocated time in the attempt whose work was kept. Philly names no GPU type:
jobs get `gpu-unknown`, which has no peak, so SG and RG come out and PG is null.
docs/adapters/philly.md says why each choice was made.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mpg.adapters import canonical
from mpg.adapters.canonical import QUARANTINE_SCHEMA, Conversion
from mpg.adapters.jobs import allocation_spans
from mpg.adapters.localtime import check_timezone
from mpg.adapters.philly_read import STATES, check, flatten, load_jobs, without_gc
from mpg.core.errors import OptionsError
from mpg.definitions.catalog import load_catalog

# How the last attempt of an ended job gives its GPUs back; an earlier attempt failed.
LAST_RELEASE = {"FINISHED": "TASK_FINISH", "FAILED": "TASK_FAIL", "CANCELLED": "TASK_EVICT"}


@dataclass(frozen=True)
class PhillyOptions:
    chip_generation: str
    workload_class: str
    framework: str
    timezone: str
    runtime: bool


def philly_options(args: argparse.Namespace) -> PhillyOptions:
    """The options, checked: a catalog generation, and a time zone Polars knows."""
    generations = load_catalog().generations
    if args.chip_generation not in generations:
        raise OptionsError(
            f"--chip-generation {args.chip_generation!r} is not in the chip catalog "
            f"({', '.join(generations)})"
        )
    return PhillyOptions(
        args.chip_generation,
        args.workload_class,
        args.framework,
        check_timezone(args.timezone),
        not args.no_runtime,
    )


def scheduler_events(
    jobs: pl.DataFrame, attempts: pl.DataFrame, opts: PhillyOptions
) -> pl.DataFrame:
    """The canonical scheduler events of usable jobs (`state` null: still open) and their
    attempts (`start`, `end` in UTC; null where not yet started, or not yet ended)."""
    submit = jobs.select(
        "file",
        pl.col("submitted").alias("ts"),
        "job_id",
        "chips_requested",
        pl.lit(opts.chip_generation).alias("chip_generation"),
        pl.lit(opts.workload_class).alias("workload_class"),
        pl.lit(opts.framework).alias("framework"),
        "owner",
        "team",
    )
    tasks = attempts.join(jobs.select("key", "file", "job_id", "state"), on="key")
    schedule = tasks.filter(pl.col("start").is_not_null()).select(
        "file",
        pl.col("start").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
        pl.col("gpus").alias("chips"),
    )
    release = tasks.filter(pl.col("end").is_not_null()).select(
        "file",
        pl.when(pl.col("last"))
        .then(pl.col("state").replace_strict(LAST_RELEASE))
        .otherwise(pl.lit("TASK_FAIL"))
        .alias("type"),
        pl.col("end").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
    )
    end = tasks.filter(pl.col("last") & pl.col("state").is_not_null()).select(
        "file", pl.col("end").alias("ts"), "job_id", "state"
    )
    return canonical.scheduler_events(
        submits=submit, schedules=schedule, releases=release, ends=end
    )


def attempt_spans(jobs: pl.DataFrame, attempts: pl.DataFrame) -> pl.DataFrame:
    """One `step` span per attempt that started. The attempt still running at the trace's
    snapshot ends at the snapshot, which the trace does not record: the latest time in the
    input stands for it."""
    snapshot = pl.max_horizontal(
        jobs.get_column("submitted").max(),
        attempts.get_column("start").max(),
        attempts.get_column("end").max(),
    )
    started = attempts.filter(pl.col("start").is_not_null()).join(
        jobs.select("key", "file", "job_id"), on="key"
    )
    spans = allocation_spans(
        started.select("job_id", "attempt", "start", pl.col("end").fill_null(snapshot).alias("end"))
    )
    return spans.with_columns(started.get_column("file"))


def _quarantine(jobs: pl.DataFrame, records: list[list[object]], paths: list[Path]) -> pl.DataFrame:
    """A row per job not converted: its file, its place in the file's list, reason and JSON."""
    bad = jobs.filter(pl.col("reason").is_not_null()).sort("key")
    files = bad.get_column("file").to_list()
    positions = bad.get_column("position").to_list()
    return pl.DataFrame(
        {
            "file": [str(paths[f]) for f in files],
            "line": positions,
            "reason": bad.get_column("reason"),
            "raw": [json.dumps(records[f][p - 1]) for f, p in zip(files, positions, strict=True)],
        },
        schema=QUARANTINE_SCHEMA,
    )


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    """Every job of every file converted or quarantined; one batch per input file (named by
    its resolved path, so importing the file again replaces its records)."""
    opts = philly_options(args)
    records: list[list[object]] = []
    frames = []
    for number, path in enumerate(paths):
        jobs, shape = load_jobs(path)
        records.append(jobs)
        with without_gc():
            frames.append(flatten(jobs, shape, number))
    jobs, attempts = check(
        pl.concat([j for j, _ in frames]), pl.concat([a for _, a in frames]), opts.timezone
    )
    usable = jobs.filter(pl.col("reason").is_null()).select(
        "key",
        "file",
        "job_id",
        pl.col("submitted_utc").alias("submitted"),
        "chips_requested",
        "owner",
        "team",
        pl.when("ended").then(pl.col("status").replace_strict(STATES)).alias("state"),
    )
    # Nothing counts before submission: an attempt logged as starting earlier starts there.
    start = pl.col("start_utc")
    kept = attempts.join(usable.select("key"), on="key").select(
        "key",
        "attempt",
        "last",
        "gpus",
        pl.when(start.is_not_null()).then(pl.max_horizontal(start, "submitted_utc")).alias("start"),
        pl.col("end_utc").alias("end"),
    )
    scheduler = scheduler_events(usable, kept, opts)
    runtime = attempt_spans(usable, kept) if opts.runtime else None
    batches = canonical.batches_by_file(paths, scheduler, runtime)
    return Conversion(
        read=jobs.height,
        converted=usable.height,
        batches=batches,
        quarantine=_quarantine(jobs, records, paths),
    )
