"""`mpg import xplane`: XLA profiler captures (`*.xplane.pb`, from jax.profiler or tf.profiler)
as runtime `step` spans and profile records.

    mpg import xplane profile/ --out traces --job-id llm-7b --chips 8 --chip-generation tpu-v5e

Each step annotation (`jax.profiler.StepTraceAnnotation`, `tf.profiler.experimental.Trace` with
`step_num`) is one record: a `step` span over its wall-clock interval, and a profile record whose
`model_flops` is XLA's cost analysis of the programs the steps launched, per step and device, on
the compiled modules the capture embeds, times the job's chips. A `--cost-analysis` sidecar gives
one step's FLOPs instead, and then jax is not needed. docs/adapters/xplane.md has the rules.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mpg.adapters.arguments import JobOptions, job_options
from mpg.adapters.canonical import UTC_TIME, Batch, Conversion, empty_quarantine
from mpg.adapters.jobs import JOB_EXTENT_SCHEMA, synthesized_scheduler
from mpg.adapters.xplane_cost import StepCost, program_costs, read_cost_sidecar
from mpg.adapters.xplane_read import Capture, read_capture
from mpg.core.errors import OptionsError, TraceFileError

JOB_SIDECAR_SUFFIX = ".mpg.json"  # <host>.mpg.json beside <host>.xplane.pb
GIVE_SIDECAR = "give one step's cost with --cost-analysis FILE"
_JOB_KEYS = {"job_id": str, "chips": int, "chip_generation": str, "attempt": int}


@dataclass(frozen=True)
class FileJob:
    job_id: str
    attempt: int
    opts: JobOptions


def job_sidecar(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".xplane.pb") + JOB_SIDECAR_SUFFIX)


def _file_job(path: Path, args: argparse.Namespace) -> FileJob:
    """The job of one capture: the options, over its sidecar's values where an option is not
    given (so one command can import captures of several jobs, each with its sidecar)."""
    found: dict[str, Any] = {}
    sidecar = job_sidecar(path)
    if sidecar.is_file():
        try:
            found = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise OptionsError(f"{sidecar}: not a readable JSON object: {exc}") from exc
        if not isinstance(found, dict) or set(found) - set(_JOB_KEYS):
            raise OptionsError(f"{sidecar}: a JSON object with only keys {', '.join(_JOB_KEYS)}")
        for key, kind in _JOB_KEYS.items():
            if key in found and (type(found[key]) is not kind):
                raise OptionsError(f"{sidecar}: {key} must be a JSON {kind.__name__}")
    merged = argparse.Namespace(**vars(args))
    for key in _JOB_KEYS:
        if getattr(args, key) is None:
            setattr(merged, key, found.get(key))
    where = f"(option, or in {sidecar.name} beside it)"
    if not merged.job_id:
        raise OptionsError(f"{path}: --job-id is needed {where}")
    if merged.chips is None:
        raise OptionsError(f"{path}: --chips is needed, for the profile records {where}")
    attempt = 0 if merged.attempt is None else merged.attempt
    if attempt < 0:
        raise OptionsError(f"--attempt must be >= 0, not {attempt}")
    return FileJob(merged.job_id, attempt, job_options(merged))


def _times(column: str, capture: Capture) -> pl.Expr:
    """Picoseconds from the capture's origin -> microseconds since the epoch, rounded."""
    ns = capture.origin_ns + pl.col(column) // 1000
    return ((ns + 500) // 1000).alias(column.replace("_ps", "_us"))


def _hlo_step_cost(path: Path, capture: Capture) -> StepCost:
    """One step's per-device cost: every program launch from the first step's start to the end
    of the capture, costed by XLA's cost analysis of its module, over the number of steps.

    Launches are counted from the first step on rather than inside each step's annotation:
    jax dispatches asynchronously, so a program often runs after the annotation that launched
    it has ended, even after the loop (docs/adapters/xplane.md, "Which programs are the step")."""
    first = capture.steps.get_column("start_ps").min()
    counts = (
        capture.launches.filter(pl.col("start_ps") >= first)
        .group_by("program_id")
        .agg(pl.len().alias("launches"))
    )
    if not counts.height:
        raise TraceFileError(f"{path}: no XLA program ran from the first step on; {GIVE_SIDECAR}")
    costs = program_costs({p: capture.programs.get(p) for p in counts["program_id"]})
    problems = costs.get_column("problem").drop_nulls()
    if problems.len():
        raise TraceFileError(f"{path}: {problems[0]}; {GIVE_SIDECAR}")
    total = counts.join(costs, on="program_id").select(
        (pl.col("launches") * pl.col("flops")).sum().alias("flops"),
        (pl.col("launches") * pl.col("bytes_accessed")).sum().alias("bytes"),
    )
    steps = capture.steps.height
    return StepCost(total.item(0, 0) / steps, total.item(0, 1) / steps, "hlo_optimized")


def _convert_file(
    path: Path, capture: Capture, job: FileJob, cost: StepCost
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One capture's steps, each with its span's and its profile record's fields, and its
    quarantine: a step whose `step_num` is not an integer, or that lasted less than the
    microsecond its times are rounded to."""
    steps = capture.steps.with_row_index("index", offset=1).with_columns(
        (pl.col("start_ps") + pl.col("duration_ps")).alias("end_ps")
    )
    step = pl.col("step_num").cast(pl.Int64, strict=False)
    checked = steps.with_columns(
        _times("start_ps", capture), _times("end_ps", capture), step.alias("step")
    ).with_columns(
        pl.when(pl.col("step").is_null())
        .then(pl.lit("step_num not an integer"))
        .when(pl.col("end_us") <= pl.col("start_us"))
        .then(pl.lit("step without a duration"))
        .alias("reason")
    )
    quarantine = checked.filter(pl.col("reason").is_not_null()).select(
        pl.lit(str(path)).alias("file"),
        pl.col("index").cast(pl.Int64).alias("line"),
        "reason",
        pl.struct("name", "step_num", "start_ps", "duration_ps").struct.json_encode().alias("raw"),
    )
    chips = job.opts.chips
    moved = None if cost.bytes_accessed is None else cost.bytes_accessed * chips
    good = checked.filter(pl.col("reason").is_null()).select(
        pl.lit(job.job_id).alias("job_id"),
        pl.lit(job.attempt).alias("attempt"),
        pl.from_epoch("start_us", time_unit="us").cast(UTC_TIME).alias("start"),
        pl.from_epoch("end_us", time_unit="us").cast(UTC_TIME).alias("end"),
        "step",
        # Polars divides by a constant through its reciprocal: round back to the microsecond.
        ((pl.col("end_us") - pl.col("start_us")) / 1e6).round(6).alias("step_time_s"),
        pl.lit(cost.flops * chips, dtype=pl.Float64).alias("model_flops"),
        pl.lit(moved, dtype=pl.Float64).alias("hbm_bytes"),
        pl.lit(chips).alias("chips"),
        pl.lit(cost.flops_source).alias("flops_source"),
    )
    return good, quarantine


def _job_batch(job_id: str, steps: pl.DataFrame, opts: JobOptions) -> Batch:
    runtime = steps.select(
        "job_id", "attempt", pl.lit("step").alias("kind"), "start", "end", "step"
    )
    profiles = steps.select(
        "job_id",
        pl.col("start").alias("ts"),
        "step",
        "step_time_s",
        "model_flops",
        "hbm_bytes",
        "chips",
        "flops_source",
    )
    scheduler = None
    if opts.synthesize and steps.height:
        # A capture is a window of a job: it says nothing of how the job ended, so no JOB_END.
        extent = pl.DataFrame(
            {"job_id": [job_id], "first": [steps["start"].min()], "last": [steps["end"].max()]},
            schema={k: v for k, v in JOB_EXTENT_SCHEMA.items() if k != "state"},
        ).with_columns(pl.lit(None, dtype=pl.String).alias("state"))
        scheduler = synthesized_scheduler(extent, opts)
    return Batch(name=job_id, scheduler=scheduler, runtime=runtime, profiles=profiles)


def convert(paths: Sequence[Path], args: argparse.Namespace) -> Conversion:
    sidecar = read_cost_sidecar(args.cost_analysis) if args.cost_analysis else None
    converted: dict[str, list[pl.DataFrame]] = {}
    options: dict[str, JobOptions] = {}
    quarantines = [empty_quarantine()]
    read = 0
    for path in paths:
        job = _file_job(path, args)
        if options.setdefault(job.job_id, job.opts) != job.opts:
            raise OptionsError(
                f"{path}: job {job.job_id}'s chips or generation differ between files"
            )
        capture = read_capture(path)
        cost = sidecar or _hlo_step_cost(path, capture)
        good, quarantine = _convert_file(path, capture, job, cost)
        read += capture.steps.height
        converted.setdefault(job.job_id, []).append(good)
        quarantines.append(quarantine)
    batches = [
        _job_batch(job_id, pl.concat(frames), options[job_id])
        for job_id, frames in converted.items()
    ]
    quarantine = pl.concat(quarantines)
    return Conversion(
        read=read, converted=read - quarantine.height, batches=batches, quarantine=quarantine
    )
