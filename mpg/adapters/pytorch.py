"""`mpg import pytorch`: PyTorch profiler traces (`*.pt.trace.json[.gz]`) as runtime `step`
spans and, with a FLOPs sidecar, profile records.

    mpg import pytorch run/ --out traces --job-id resnet --chips 8 --chip-generation gpu-a100

All the files of one import are one attempt of one job, typically one file per rank. A step is
a `ProfilerStep#N` event (mpg.adapters.chrome_trace). Where every file names its own rank (the
trace's `distributedInfo`, as torch.distributed writes it), each rank's step is a span of its own
with its `rank`, so step-time statistics can tell the slowest rank (docs/trace-format.md); the
accounting counts the time under several ranks' spans once. Otherwise the files' steps make one
span per step, from the earliest start to the latest end. Either way a step has one profile
record, whose `step_time_s` is the slowest rank's. The exported trace carries no FLOPs, so they
come from a sidecar written at capture time with `torch.utils.flop_counter.FlopCounterMode`
(mpg.adapters.flops_sidecar).
Without one, only the spans are written and the job's PG is null (docs/adapters/pytorch.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import polars as pl

from mpg.adapters.arguments import JobOptions, job_options
from mpg.adapters.canonical import Batch, Conversion
from mpg.adapters.chrome_trace import profiled_steps
from mpg.adapters.flops_sidecar import FlopsSidecar, agreed, read_sidecar, sidecar_path
from mpg.adapters.jobs import synthesized_scheduler
from mpg.core.errors import OptionsError, TraceFileError


def _sidecars(paths: list[Path], given: Path | None) -> list[FlopsSidecar]:
    if given is not None:
        if not given.is_file():
            raise TraceFileError(f"--flops {given} does not exist")
        return [read_sidecar(given)]
    return [read_sidecar(s) for s in map(sidecar_path, paths) if s.is_file()]


def _job(args: argparse.Namespace, sidecars: list[FlopsSidecar]) -> tuple[str, JobOptions]:
    """The job id and options: the command line's, else what the sidecars agree on."""
    if args.attempt < 0:
        raise OptionsError(f"--attempt must be >= 0, not {args.attempt}")
    job_id = args.job_id or agreed(sidecars, "job_id")
    if not job_id:
        raise OptionsError("--job-id is needed (no FLOPs sidecar names the job)")
    merged = argparse.Namespace(**vars(args))
    if merged.chips is None:
        merged.chips = agreed(sidecars, "chips")
    if merged.chip_generation is None:
        merged.chip_generation = agreed(sidecars, "chip_generation")
    opts = job_options(merged)
    if sidecars and opts.chips is None:
        raise OptionsError("--chips is needed for the profile records (no FLOPs sidecar names it)")
    return job_id, opts


def _microseconds(column: str) -> pl.Expr:
    """Nanoseconds since the Unix epoch as a UTC time, to the nearest microsecond."""
    return ((pl.col(column) + 500) // 1000).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")


def _steps(
    paths: list[Path], start: dt.datetime | None
) -> tuple[Conversion, pl.DataFrame, pl.DataFrame]:
    """Every file's steps: the spans (one per rank and step where every file names a distinct
    rank, else one per step over the files) and one row per step number with its wall-clock
    extent over the ranks and the slowest rank's `dur`. The Conversion carries the counts and
    the quarantine (no batches yet)."""
    found = [profiled_steps(p, start) for p in paths]
    ranks = [f.rank for f in found]
    every = pl.concat([f.steps.with_columns(pl.lit(f.rank, pl.Int64).alias("rank")) for f in found])
    quarantine = pl.concat([f.quarantine for f in found])
    steps = (
        every.group_by("step")
        .agg(pl.col("start_ns").min(), pl.col("end_ns").max(), pl.col("dur_us").max())
        .sort("step")
        .select(
            "step",
            # Rounded to the microsecond, the finest time the canonical records carry.
            *(_microseconds(c).alias(c.removesuffix("_ns")) for c in ("start_ns", "end_ns")),
            "dur_us",
        )
    )
    counts = Conversion(
        read=sum(f.read for f in found), converted=every.height, quarantine=quarantine
    )
    per_rank = None not in ranks and len(set(ranks)) == len(ranks)
    spans = (
        every.sort("step", "rank").select(
            "step",
            *(_microseconds(c).alias(c.removesuffix("_ns")) for c in ("start_ns", "end_ns")),
            "rank",
        )
        if per_rank
        else steps.select("step", "start", "end", pl.lit(None, pl.Int64).alias("rank"))
    )
    return counts, steps, spans


def _profiles(
    steps: pl.DataFrame, job_id: str, opts: JobOptions, sidecars: list[FlopsSidecar]
) -> pl.DataFrame:
    """One profile record per step. Each sidecar counts one rank's step; with one rank per chip,
    the job's step is the ranks' mean times the chips (their sum when every rank's sidecar is
    at hand)."""
    per_rank = sum(s.flops_per_step for s in sidecars) / len(sidecars)
    return steps.select(
        pl.lit(job_id).alias("job_id"),
        pl.col("start").alias("ts"),
        "step",
        # A trace's durations are whole nanoseconds: 9 decimals keep all, and no float noise.
        (pl.col("dur_us") / 1e6).round(9).alias("step_time_s"),
        pl.lit(per_rank * opts.chips).alias("model_flops"),
        pl.lit(opts.chips).alias("chips"),
        pl.lit(agreed(sidecars, "flops_source")).alias("flops_source"),
    )


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    sidecars = _sidecars(paths, args.flops)
    job_id, opts = _job(args, sidecars)
    counts, steps, spans = _steps(paths, args.start)
    job = pl.lit(job_id).alias("job_id")
    runtime = spans.select(
        job,
        pl.lit(args.attempt).alias("attempt"),
        pl.lit("step").alias("kind"),
        "start",
        "end",
        "step",
        "rank",
    )
    if sidecars:
        profiles = _profiles(steps, job_id, opts, sidecars)
    else:
        profiles = None
        names = ", ".join(sidecar_path(p).name for p in paths[:3])
        print(
            f"mpg import pytorch: no FLOPs sidecar ({names}{', ...' if len(paths) > 3 else ''}) "
            "and no --flops: step spans only, so the job's PG will be null",
            file=sys.stderr,
        )
    scheduler = None
    if opts.synthesize and steps.height:
        extent = steps.select(
            job,
            pl.col("start").min().alias("first"),
            pl.col("end").max().alias("last"),
            pl.lit(None, pl.String).alias("state"),  # the trace does not say how the job ended
        )
        scheduler = synthesized_scheduler(extent, opts)
    batch = Batch(f"{job_id}-attempt{args.attempt}", scheduler, runtime, profiles)
    return Conversion(counts.read, counts.converted, [batch], counts.quarantine)
