"""`mpg import slurm`: Slurm's accounting (`sacct --parsable2`) as scheduler events and spans.

    FIELDS=JobID,JobIDRaw,Partition,Account,User,Submit,Eligible,Start,End,State
    FIELDS=$FIELDS,ReqTRES,AllocTRES,NodeList
    TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0 sacct --allusers --duplicates \\
        --allocations --parsable2 --starttime=2026-11-22T00:00:00 --endtime=2026-11-23T00:00:00 \\
        --format=$FIELDS > sacct-2026-11-22.txt
    mpg import slurm sacct-*.txt --out traces --gpu-type a100=gpu-a100 --gpu-type h100=gpu-h100

Every job (an array task; a heterogeneous job, its components `123+0`, `123+1` together) becomes
`JOB_SUBMIT` when it became eligible to run, with its User, Account and Partition as owner, team
and queue; each of its incarnations (`--duplicates` gives one row per requeue) that was allocated
a `TASK_SCHEDULE` of its GPUs at Start and a release at End (a heterogeneous job's components are
its tasks, so it is all-allocated only while every one holds its GPUs), the release and `JOB_END`
saying how it ended; each allocation is also one runtime `step` span of its attempt
(`allocation_spans`). SG then shows queueing, requeues and preemptions; RG the share of allocated
time in the attempt whose work was kept. Rows of several files are merged, so an incarnation read
running in one day's output and ended in the next is one incarnation. docs/adapters/slurm.md
says why each choice was made.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mpg.adapters import canonical
from mpg.adapters.canonical import UTC_TIME, Conversion
from mpg.adapters.jobs import allocation_spans
from mpg.adapters.localtime import check_timezone
from mpg.adapters.slurm_read import (
    JOB_END,
    NO_GPU,
    RELEASE,
    TIME_FIELDS,
    expand_tasks,
    parse_rows,
    read_rows,
)
from mpg.core.errors import OptionsError
from mpg.definitions.catalog import load_catalog

UNKNOWN_GPU = "gpu-unknown"
SAME_JOB = "another row of its job is quarantined"


@dataclass(frozen=True)
class SlurmOptions:
    gpu_types: dict[str, str]  # GPU type as the accounting names it (lower case) -> catalog id
    timezone: str
    workload_class: str
    framework: str
    runtime: bool
    as_of: dt.datetime | None  # when sacct ran, where a running incarnation's span ends


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
        args.as_of,
    )


def _entries(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per (input row, job it stands for), job steps left out, with the `gang` it is a
    part of (a heterogeneous job's id for its components, else the job's own). A row of pending
    array tasks also standing for a task that has a row of its own is stale for that task
    (Slurm's database updates the list later than the task), so the task's own rows speak for
    it."""
    jobs = rows.filter(~pl.col("step"))
    usable = jobs.filter(pl.col("reason").is_null())
    bad = jobs.filter(pl.col("reason").is_not_null()).with_columns(
        pl.col("JobID").alias("job_id"), pl.lit(False).alias("from_list")
    )
    entries = pl.concat([expand_tasks(usable), bad], how="vertical")
    own = entries.filter(~pl.col("from_list")).get_column("job_id").unique()
    return entries.filter(
        ~pl.col("from_list") | ~pl.col("job_id").is_in(own.implode())
    ).with_columns(pl.coalesce("het_id", "job_id").alias("gang"))


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


def _gpu_less(entries: pl.DataFrame) -> pl.DataFrame:
    """The components (`job_id`) of heterogeneous jobs none of whose components has a GPU, each
    with reason NO_GPU (a job of one component without one has it as its own row's reason)."""
    has_gpu = (pl.col("ReqTRES_gpus").fill_null(0) > 0) | (
        pl.col("AllocTRES_gpus").fill_null(0) > 0
    )
    components = entries.filter(pl.col("het_id").is_not_null())
    gpu_less = components.group_by("gang").agg(has_gpu.any().alias("gpu")).filter(~pl.col("gpu"))
    return (
        components.join(gpu_less, on="gang", how="semi")
        .select("job_id", pl.lit(NO_GPU).alias("reason"))
        .unique("job_id", maintain_order=True)
    )


def _row_reasons(rows: pl.DataFrame, entries: pl.DataFrame, order: pl.DataFrame) -> pl.DataFrame:
    """`rows` with their final `reason`: their own, else `SAME_JOB` when another row of their
    job is quarantined, else their job's (incarnations out of order, a heterogeneous job without
    a GPU). A heterogeneous job is one job: a quarantined component quarantines the others."""
    component_reason = pl.concat(
        [
            entries.filter(pl.col("reason").is_not_null()).select(
                "job_id", pl.lit(SAME_JOB).alias("reason")
            ),
            order.filter(pl.col("reason").is_not_null()).select("job_id", "reason"),
            _gpu_less(entries),
        ]
    ).unique("job_id", keep="first", maintain_order=True)
    gangs = entries.select("job_id", "gang").unique(maintain_order=True)
    troubled = gangs.join(component_reason, on="job_id", how="semi").select("gang").unique()
    job_reason = pl.concat(
        [
            component_reason,
            gangs.join(troubled, on="gang").select("job_id", pl.lit(SAME_JOB).alias("reason")),
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


def _named(column: str) -> pl.Expr:
    """A sacct text field as a canonical one: empty is none."""
    return pl.when(pl.col(column) != "").then(pl.col(column)).alias(column)


def _components(incarnations: pl.DataFrame) -> pl.DataFrame:
    """One row per usable job or heterogeneous job's component (`job_id`), of its `gang`: when it
    started wanting GPUs (`wanted_from`: its first eligibility, or its first allocation if that
    came earlier; null if it never became eligible), how many (ReqTRES, else AllocTRES, of its
    first incarnation), which kinds, who ran it and who paid where (User; Account and Partition
    of its last incarnation: an update while pending changes them), how it ended (`state`,
    null: open; `end`), and the input file of its last incarnation."""
    allocated_start = pl.when(pl.col("allocated")).then(pl.col("Start_utc"))
    return (
        incarnations.sort("n")
        .group_by("gang", "job_id")
        .agg(
            pl.col("component").first(),
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
            pl.col("Account").last().alias("team"),
            pl.col("Partition").last().alias("queue"),
            pl.col("file").last(),
            pl.col("state").last().alias("last_state"),
            pl.col("released").last().alias("end"),
        )
        .with_columns(
            pl.when(pl.col("end").is_not_null())
            .then(
                pl.col("last_state").replace_strict(JOB_END, default=None, return_dtype=pl.String)
            )
            .alias("state"),
            *(_named(c) for c in ("owner", "team", "queue")),
        )
    )


def _jobs(incarnations: pl.DataFrame, opts: SlurmOptions) -> pl.DataFrame:
    """One row per usable job (`job_id`: a heterogeneous job's is its id, `123`): its components'
    (`_components`) taken together. It wants GPUs from the first component's wanting them, all
    their GPUs, of one generation if they name one; its team and queue are those of its first
    component with GPUs (who pays for them, where they waited); it is open while any component
    is, else it ends with the last one, as its leader (`+0`, which runs the batch script) ended;
    its batch is the latest file of its components' last incarnations."""
    gpus = pl.col("chips_requested").fill_null(0) > 0
    per_job = (
        _components(incarnations)
        .sort("component")
        .group_by("gang")
        .agg(
            pl.col("wanted_from").min(),
            pl.col("chips_requested").sum(),
            pl.col("types")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .unique(maintain_order=True),
            pl.col("owner").drop_nulls().first(),
            pl.col("team").filter(gpus).first(),
            pl.col("queue").filter(gpus).first(),
            pl.col("file").max(),
            pl.when(pl.col("state").is_not_null().all()).then(pl.col("end").max()).alias("end"),
            pl.col("state").first().alias("leader_state"),
        )
        .rename({"gang": "job_id"})
    )
    return per_job.with_columns(
        _generation(opts.gpu_types).alias("chip_generation"),
        pl.when(pl.col("end").is_not_null()).then(pl.col("leader_state")).alias("state"),
    )


def scheduler_events(
    jobs: pl.DataFrame, incarnations: pl.DataFrame, opts: SlurmOptions
) -> pl.DataFrame:
    """The canonical events of jobs that became eligible, each with its batch's `file`."""
    submit = jobs.select(
        "file",
        pl.col("wanted_from").alias("ts"),
        "job_id",
        "chips_requested",
        "chip_generation",
        pl.lit(opts.workload_class).alias("workload_class"),
        pl.lit(opts.framework).alias("framework"),
        "owner",
        "team",
        "queue",
    )
    # A heterogeneous job's components are its tasks, numbered by their offset (0 otherwise).
    held = incarnations.filter(pl.col("allocated") & (pl.col("chips") > 0)).with_columns(
        pl.col("gang").alias("job_id"), pl.col("component").alias("task_index")
    )
    schedule = held.select("file", pl.col("Start_utc").alias("ts"), "job_id", "task_index", "chips")
    release = held.filter(pl.col("released").is_not_null()).select(
        "file",
        pl.col("state")
        .replace_strict(RELEASE, default="TASK_EVICT", return_dtype=pl.String)
        .alias("type"),
        pl.col("released").alias("ts"),
        "job_id",
        "task_index",
    )
    end = jobs.filter(pl.col("state").is_not_null()).select(
        "file", pl.col("end").alias("ts"), "job_id", "state"
    )
    return canonical.scheduler_events(
        submits=submit, schedules=schedule, releases=release, ends=end
    )


def attempt_spans(incarnations: pl.DataFrame, snapshot: pl.Expr) -> pl.DataFrame:
    """One `step` span per allocated incarnation of a job (of all its components together, for
    a heterogeneous job: the first Start to the last End), attempts numbered 0, 1, ... in order.
    One still running ends at `snapshot`: when sacct ran (`--as-of`), else the input's latest
    time, which stands for it."""
    held = (
        incarnations.filter(pl.col("allocated"))
        .group_by("gang", "n")
        .agg(
            pl.col("Start_utc").min().alias("start"),
            pl.coalesce("released", snapshot).max().alias("end"),
            pl.col("file").first(),
        )
        .sort("gang", "n")
        .with_columns(pl.int_range(pl.len()).over("gang").alias("attempt"))
    )
    spans = allocation_spans(held.select(pl.col("gang").alias("job_id"), "attempt", "start", "end"))
    return spans.with_columns(held.get_column("file"))


def _report(
    rows: pl.DataFrame, components: pl.DataFrame, jobs: pl.DataFrame, opts: SlurmOptions
) -> None:
    """What was read and written as nothing, or as gpu-unknown, said on stderr."""
    notes = []
    steps = rows.filter(pl.col("step") & pl.col("reason").is_null()).height
    if steps:
        notes.append(
            f"{steps} job step rows (.batch, .extern, .N) are parts of their jobs: nothing "
            "written for them (sacct --allocations leaves them out)"
        )
    cpu_parts = components.filter(pl.col("chips_requested").fill_null(0) == 0).height
    if cpu_parts:
        notes.append(
            f"{cpu_parts} CPU-only components of heterogeneous jobs are parts of their jobs: "
            "nothing written for them (their jobs are all-allocated while the GPU ones hold GPUs)"
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


def _snapshot(incarnations: pl.DataFrame, opts: SlurmOptions) -> dt.datetime | None:
    """When sacct ran: `--as-of`, which cannot be before the input's latest time; else that
    time, the nearest the input knows (sacct does not print when it ran)."""
    latest = incarnations.select(pl.max_horizontal(f"{f}_utc" for f in TIME_FIELDS).max()).item()
    if opts.as_of is None:
        return latest
    if latest is not None and opts.as_of < latest:
        raise OptionsError(
            f"--as-of {opts.as_of.isoformat()} is before the input's latest time "
            f"{latest.isoformat()}"
        )
    return opts.as_of


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
    eligible = jobs.filter(pl.col("wanted_from").is_not_null())
    # All of a job's records go into the batch of the file that gave its last incarnation.
    batched = incarnations.drop("file").join(
        eligible.select(pl.col("job_id").alias("gang"), "file"), on="gang"
    )
    snapshot = pl.lit(_snapshot(batched, opts), UTC_TIME)
    _report(rows, _components(incarnations.filter(pl.col("het_id").is_not_null())), jobs, opts)
    incarnations = batched
    scheduler = scheduler_events(eligible, incarnations, opts)
    runtime = attempt_spans(incarnations, snapshot) if opts.runtime else None
    batches = canonical.batches_by_file(paths, scheduler, runtime)
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
