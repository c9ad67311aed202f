"""`mpg import slurm`: Slurm's accounting (`sacct --parsable2`) as scheduler events and spans.

    FIELDS=JobID,JobIDRaw,Partition,User,Submit,Eligible,Start,End,State,ReqTRES,AllocTRES,NodeList
    TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0 sacct --allusers --duplicates \\
        --allocations --parsable2 --starttime=2026-11-22T00:00:00 --endtime=2026-11-23T00:00:00 \\
        --format=$FIELDS > sacct-2026-11-22.txt
    mpg import slurm sacct-*.txt --out traces --gpu-type a100=gpu-a100 --gpu-type h100=gpu-h100

Every job (an array task, a heterogeneous job's component) becomes `JOB_SUBMIT` when it became
eligible to run, and each of its incarnations (`--duplicates` gives one row per requeue) that was
allocated a `TASK_SCHEDULE` of its GPUs at Start and a release at End, the release and `JOB_END`
saying how it ended; each allocation is also one runtime `step` span of its attempt
(`allocation_spans`). SG then shows queueing, requeues and preemptions; RG the share of allocated
time in the attempt whose work was kept. Rows of several files are merged, so an incarnation read
running in one day's output and ended in the next is one incarnation. docs/adapters.md (section
slurm) says why each choice was made.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mpg.adapters.canonical import UTC_TIME, Batch, Conversion
from mpg.adapters.jobs import allocation_spans
from mpg.adapters.localtime import check_timezone
from mpg.adapters.slurm_read import (
    JOB_END,
    RELEASE,
    TIME_FIELDS,
    expand_tasks,
    parse_rows,
    read_rows,
)
from mpg.catalog import load_catalog
from mpg.errors import OptionsError

UNKNOWN_GPU = "gpu-unknown"
SAME_JOB = "another row of its job is quarantined"


@dataclass(frozen=True)
class SlurmOptions:
    gpu_types: dict[str, str]  # GPU type as the accounting names it (lower case) -> catalog id
    timezone: str
    workload_class: str
    framework: str
    runtime: bool


def slurm_options(args: argparse.Namespace) -> SlurmOptions:
    """The options, checked: each --gpu-type names a catalog id, and a type once."""
    generations = load_catalog().generations
    gpu_types: dict[str, str] = {}
    for item in args.gpu_type:
        name, sep, generation = item.partition("=")
        name = name.strip().lower()
        if not sep or not name or not generation:
            raise OptionsError(f"--gpu-type {item!r} is not TYPE=ID (e.g. a100=gpu-a100)")
        if generation not in generations:
            raise OptionsError(
                f"--gpu-type {item!r}: {generation!r} is not in the chip catalog "
                f"({', '.join(generations)})"
            )
        if gpu_types.get(name, generation) != generation:
            raise OptionsError(f"--gpu-type gives {name!r} two catalog ids")
        gpu_types[name] = generation
    return SlurmOptions(
        gpu_types,
        check_timezone(args.timezone),
        args.workload_class,
        args.framework,
        not args.no_runtime,
    )


def _entries(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per (input row, job it stands for), job steps left out. A row of pending array
    tasks also standing for a task that has a row of its own is stale for that task (Slurm's
    database updates the list later than the task), so the task's own rows speak for it."""
    jobs = rows.filter(~pl.col("step"))
    usable = jobs.filter(pl.col("reason").is_null())
    bad = jobs.filter(pl.col("reason").is_not_null()).with_columns(
        pl.col("JobID").alias("job_id"), pl.lit(False).alias("from_list")
    )
    entries = pl.concat([expand_tasks(usable), bad], how="vertical")
    own = entries.filter(~pl.col("from_list")).get_column("job_id").unique()
    return entries.filter(~pl.col("from_list") | ~pl.col("job_id").is_in(own.implode()))


def _incarnations(entries: pl.DataFrame) -> pl.DataFrame:
    """The usable jobs' incarnations, in order (`n`), one row each, with `reason` where the
    job's incarnations do not follow one another. The same incarnation read in several files
    (by its job, Submit, and place among the file's rows of that Submit) counts once: the row
    that knows most (an End, then a Start), else the one read last."""
    numbered = entries.sort("file", "line").with_columns(
        pl.int_range(pl.len()).over("file", "job_id", "Submit_utc").alias("k")
    )
    best = (
        numbered.sort(
            pl.col("End_utc").is_not_null(), pl.col("Start_utc").is_not_null(), "file", "line"
        )
        .group_by("job_id", "Submit_utc", "k")
        .last()
        .sort("job_id", "Submit_utc", "k")
        .with_columns(
            pl.int_range(pl.len()).over("job_id").alias("n"),
            (pl.int_range(pl.len()).over("job_id") == pl.len().over("job_id") - 1).alias("last"),
        )
    )
    before = pl.col("released").shift(1).over("job_id", order_by="n")
    return best.with_columns(
        pl.coalesce(
            pl.when(~pl.col("last") & pl.col("released").is_null()).then(
                pl.lit("incarnation without End followed by another")
            ),
            pl.when(pl.col("allocated") & (pl.col("Start_utc") < before)).then(
                pl.lit("incarnations overlap")
            ),
        ).alias("reason")
    )


def _row_reasons(rows: pl.DataFrame, entries: pl.DataFrame, order: pl.DataFrame) -> pl.DataFrame:
    """`rows` with their final `reason`: their own, else `SAME_JOB` when another row of their
    job is quarantined, else their job's (incarnations out of order)."""
    job_reason = pl.concat(
        [
            entries.filter(pl.col("reason").is_not_null()).select(
                "job_id", pl.lit(SAME_JOB).alias("reason")
            ),
            order.filter(pl.col("reason").is_not_null()).select("job_id", "reason"),
        ]
    ).unique("job_id", keep="first", maintain_order=True)
    per_row = (
        entries.select("key", "job_id")
        .join(job_reason, on="job_id")
        .group_by("key")
        .agg(pl.col("reason").first().alias("job_reason"))
    )
    return rows.join(per_row, on="key", how="left").with_columns(
        pl.coalesce("reason", "job_reason").alias("reason")
    )


def _generation(gpu_types: dict[str, str]) -> pl.Expr:
    """One catalog generation when every GPU type a job names maps to it, else gpu-unknown."""
    mapped = pl.col("types").list.eval(
        pl.element().replace_strict(gpu_types, default=None, return_dtype=pl.String)
    )
    single = (
        (mapped.list.len() > 0)
        & ~mapped.list.eval(pl.element().is_null().any()).list.first()
        & (mapped.list.n_unique() == 1)
    )
    return pl.when(single).then(mapped.list.first()).otherwise(pl.lit(UNKNOWN_GPU))


def _jobs(incarnations: pl.DataFrame, opts: SlurmOptions) -> pl.DataFrame:
    """One row per usable job: when it started wanting GPUs (`wanted_from`: its first
    eligibility, or its first allocation if that came earlier; null if it never became
    eligible), how many (ReqTRES, else AllocTRES), which kind, how it ended (null: open), and
    the input file of its last incarnation (its batch)."""
    allocated_start = pl.when(pl.col("allocated")).then(pl.col("Start_utc"))
    per_job = (
        incarnations.sort("n")
        .group_by("job_id")
        .agg(
            pl.min_horizontal(pl.col("Eligible_utc").min(), allocated_start.min()).alias(
                "wanted_from"
            ),
            pl.coalesce(
                pl.col("ReqTRES_gpus").drop_nulls().first(),
                pl.col("AllocTRES_gpus").drop_nulls().first(),
            ).alias("chips_requested"),
            pl.col("types")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .unique(maintain_order=True)
            .alias("types"),
            pl.col("User").first().alias("owner"),
            pl.col("file").last(),
            pl.col("state").last().alias("last_state"),
            pl.col("released").last().alias("end"),
        )
    )
    return per_job.with_columns(
        _generation(opts.gpu_types).alias("chip_generation"),
        pl.when(pl.col("end").is_not_null())
        .then(pl.col("last_state").replace_strict(JOB_END, default=None, return_dtype=pl.String))
        .alias("state"),
        pl.when(pl.col("owner") != "").then(pl.col("owner")).alias("owner"),
    )


def scheduler_events(
    jobs: pl.DataFrame, incarnations: pl.DataFrame, opts: SlurmOptions
) -> pl.DataFrame:
    """The canonical events of jobs that became eligible, each with its batch's `file`."""
    submit = jobs.select(
        "file",
        pl.lit("JOB_SUBMIT").alias("type"),
        pl.col("wanted_from").alias("ts"),
        "job_id",
        "chips_requested",
        "chip_generation",
        pl.lit(opts.workload_class).alias("workload_class"),
        pl.lit(opts.framework).alias("framework"),
        "owner",
    )
    held = incarnations.filter(pl.col("allocated") & (pl.col("chips") > 0))
    schedule = held.select(
        "file",
        pl.lit("TASK_SCHEDULE").alias("type"),
        pl.col("Start_utc").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
        "chips",
    )
    release = held.filter(pl.col("released").is_not_null()).select(
        "file",
        pl.col("state")
        .replace_strict(RELEASE, default="TASK_EVICT", return_dtype=pl.String)
        .alias("type"),
        pl.col("released").alias("ts"),
        "job_id",
        pl.lit(0).alias("task_index"),
    )
    end = jobs.filter(pl.col("state").is_not_null()).select(
        "file", pl.lit("JOB_END").alias("type"), pl.col("end").alias("ts"), "job_id", "state"
    )
    return pl.concat([submit, schedule, release, end], how="diagonal")


def attempt_spans(incarnations: pl.DataFrame, snapshot: pl.Expr) -> pl.DataFrame:
    """One `step` span per allocated incarnation, attempts numbered 0, 1, ... in order. One
    still running ends at the input's latest time, which stands for when sacct was run."""
    held = incarnations.filter(pl.col("allocated")).with_columns(
        pl.int_range(pl.len()).over("job_id", order_by="n").alias("attempt")
    )
    spans = allocation_spans(
        held.select(
            "job_id",
            "attempt",
            pl.col("Start_utc").alias("start"),
            pl.coalesce("released", snapshot).alias("end"),
        )
    )
    return spans.with_columns(held.get_column("file"))


def _report(rows: pl.DataFrame, jobs: pl.DataFrame, opts: SlurmOptions) -> None:
    """What was read and written as nothing, or as gpu-unknown, said on stderr."""
    notes = []
    steps = rows.filter(pl.col("step") & pl.col("reason").is_null()).height
    if steps:
        notes.append(
            f"{steps} job step rows (.batch, .extern, .N) are parts of their jobs: nothing "
            "written for them (sacct --allocations leaves them out)"
        )
    never = jobs.filter(pl.col("wanted_from").is_null()).height
    if never:
        notes.append(
            f"{never} jobs never became eligible (held, or waiting on a dependency or "
            "--begin): nothing written for them"
        )
    named = jobs.filter(pl.col("wanted_from").is_not_null()).select(pl.col("types").alias("type"))
    untyped = named.filter(pl.col("type").list.len() == 0).height
    unmapped = (
        named.explode("type")
        .filter(pl.col("type").is_not_null() & ~pl.col("type").is_in(list(opts.gpu_types)))
        .group_by("type")
        .len()
        .sort("type")
    )
    listed = [f"{t} ({n} jobs)" for t, n in unmapped.iter_rows()]
    if untyped:
        listed.append(f"GPUs of no type ({untyped} jobs)")
    if listed:
        notes.append(f"written as {UNKNOWN_GPU} (no --gpu-type): {', '.join(listed)}")
    for note in notes:
        print(f"mpg import slurm: {note}", file=sys.stderr)


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    """Every sacct row of every file converted or quarantined; one batch per input file (named
    by its resolved path), holding the jobs whose last incarnation that file gave."""
    opts = slurm_options(args)
    rows = parse_rows(pl.concat([read_rows(p, n) for n, p in enumerate(paths)]), opts.timezone)
    entries = _entries(rows)
    order = _incarnations(entries.filter(pl.col("reason").is_null()))
    rows = _row_reasons(rows, entries, order)
    bad_keys = rows.filter(pl.col("reason").is_not_null()).get_column("key").implode()
    bad_jobs = entries.filter(pl.col("key").is_in(bad_keys)).get_column("job_id").implode()
    incarnations = order.filter(~pl.col("job_id").is_in(bad_jobs))
    jobs = _jobs(incarnations, opts)
    _report(rows, jobs, opts)
    eligible = jobs.filter(pl.col("wanted_from").is_not_null())
    # All of a job's records go into the batch of the file that gave its last incarnation.
    incarnations = incarnations.drop("file").join(eligible.select("job_id", "file"), on="job_id")
    times = incarnations.select(pl.max_horizontal(f"{f}_utc" for f in TIME_FIELDS).max())
    snapshot = pl.lit(times.item(), UTC_TIME)
    scheduler = scheduler_events(eligible, incarnations, opts)
    runtime = attempt_spans(incarnations, snapshot) if opts.runtime else None
    batches = [
        Batch(
            name=str(path.resolve()),
            scheduler=scheduler.filter(pl.col("file") == number).drop("file"),
            runtime=None
            if runtime is None
            else runtime.filter(pl.col("file") == number).drop("file"),
        )
        for number, path in enumerate(paths)
    ]
    bad = rows.filter(pl.col("reason").is_not_null()).sort("key")
    quarantine = bad.select(
        pl.col("file").replace_strict(dict(enumerate(map(str, paths))), return_dtype=pl.String),
        "line",
        "reason",
        "raw",
    )
    return Conversion(
        read=rows.height,
        converted=rows.height - bad.height,
        batches=batches,
        quarantine=quarantine,
    )
