"""Gather the fleet's job traces into one typed frame per source, and sample its profiles.

Frames hold typed columns (times as integer milliseconds since the epoch), not JSON: the records
are made distinct on these values, so no two records can coincide once a parser reads them back,
whatever text `mpg.simulate.encode` later gives each one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import polars as pl

from mpg.definitions.catalog import load_catalog
from mpg.definitions.vocabulary import JOB_STATES, SPAN_KINDS
from mpg.simulate.fleet import JobPlan
from mpg.simulate.timeline import EVENT_TYPES, JobTrace


@dataclass(frozen=True)
class FleetRecords:
    """The valid records of every source, one row per record, each source's rows distinct.

    jobs:      one row per job (`job`, its index): job_id, the JOB_SUBMIT fields, the profile
               knobs and the chip catalog's figures.
    scheduler: job_id, type, ts_ms, task_index, chips (null where the type has none), state.
    runtime:   job_id, attempt, kind, start_ms, end_ms, step (null where the kind has none).
    profiles:  job_id, ts_ms, step, step_time_s, model_flops, hbm_bytes, chips, flops_source.
    """

    jobs: pl.DataFrame
    scheduler: pl.DataFrame
    runtime: pl.DataFrame
    profiles: pl.DataFrame


def _jobs_frame(plans: list[JobPlan]) -> pl.DataFrame:
    catalog = pl.from_arrow(load_catalog().table)
    columns = (
        "job_id", "chips_requested", "chip_generation", "workload_class", "framework",
        "priority", "owner", "team", "queue", "topology", "profile_rate", "pg", "hbm_fraction",
        "flops_source",
    )  # fmt: skip
    jobs = pl.DataFrame(
        {
            "job": np.arange(len(plans), dtype=np.int32),
            **{name: [getattr(p, name) for p in plans] for name in columns},
        },
        schema_overrides={
            "priority": pl.Int64,
            **{name: pl.String for name in ("owner", "team", "queue", "topology")},
        },
    ).join(catalog, on="chip_generation", how="left", maintain_order="left")
    # Profiles need a peak to set model_flops from; a catalog without one is a simulator bug.
    unpriced = jobs.filter(pl.col("peak_flops_per_chip").is_null())["chip_generation"].unique()
    if unpriced.len():
        raise ValueError(f"chip catalog has no peak for {sorted(unpriced.to_list())}")
    return jobs


def _concat(traces: list[JobTrace], prefix: str, jobs: pl.DataFrame) -> pl.DataFrame:
    """One frame of the `prefix` columns of all traces, with the job's index and id."""
    names = [f.name for f in fields(JobTrace) if f.name.startswith(prefix)]
    lengths = [len(getattr(t, names[0])) for t in traces]
    columns = {
        n.removeprefix(prefix): np.concatenate([getattr(t, n) for t in traces]) for n in names
    }
    job = np.repeat(np.arange(len(traces), dtype=np.int32), lengths)
    return pl.DataFrame({"job": job, "job_id": jobs["job_id"].gather(job), **columns})


def _decode(column: str, names: tuple[str, ...]) -> pl.Expr:
    return pl.col(column).replace_strict(
        dict(enumerate(names)), default=None, return_dtype=pl.String
    )


def _ms(column: str) -> pl.Expr:
    return (pl.col(column) * 1000).round().cast(pl.Int64)


def _scheduler(traces: list[JobTrace], jobs: pl.DataFrame, epoch_ms: int) -> pl.DataFrame:
    events = _concat(traces, "ev_", jobs).with_columns(
        _decode("type", EVENT_TYPES).alias("type"),
        (_ms("ts") + epoch_ms).alias("ts_ms"),
        pl.when(pl.col("task") >= 0).then(pl.col("task").cast(pl.Int64)).alias("task_index"),
        pl.when(pl.col("chips") > 0).then(pl.col("chips").cast(pl.Int64)).alias("chips"),
        _decode("state", JOB_STATES).alias("state"),
    )
    return events.sort("job", "ts_ms", maintain_order=True).select(
        "job", "job_id", "type", "ts_ms", "task_index", "chips", "state"
    )


def _runtime(traces: list[JobTrace], jobs: pl.DataFrame, epoch_ms: int) -> pl.DataFrame:
    spans = _concat(traces, "sp_", jobs).with_columns(
        _decode("kind", SPAN_KINDS).alias("kind"),
        (_ms("start") + epoch_ms).alias("start_ms"),
        (_ms("end") + epoch_ms).alias("end_ms"),
        pl.when(pl.col("step") >= 0).then(pl.col("step")).alias("step"),
    )
    return spans.sort("job", "attempt", "start_ms", maintain_order=True).select(
        "job", "job_id", pl.col("attempt").cast(pl.Int64), "kind", "start_ms", "end_ms", "step"
    )


def _profiles(runtime: pl.DataFrame, jobs: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """Profile some steps of the profiled jobs: the measured device time is a little under the
    step span's wall time, and model_flops is set so that PG is near the job's `pg`."""
    steps = runtime.filter(pl.col("kind") == "step").join(
        jobs.drop("job_id"), on="job", maintain_order="left"
    )
    n = steps.height
    draws = pl.DataFrame(
        {
            "_pick": rng.random(n),
            "_device": rng.uniform(0.96, 1.0, n),
            "_pg_noise": rng.uniform(0.95, 1.05, n),
            "_hbm_noise": rng.uniform(0.9, 1.1, n),
        }
    )
    seconds = ((pl.col("end_ms") - pl.col("start_ms")) / 1000 * pl.col("_device")).round(3)
    per_step_peak = pl.col("chips_requested") * pl.col("step_time_s")
    return (
        pl.concat([steps, draws], how="horizontal")
        .filter(pl.col("_pick") < pl.col("profile_rate"))
        .with_columns(pl.max_horizontal(seconds, pl.lit(0.001)).alias("step_time_s"))
        .select(
            "job",
            "job_id",
            pl.col("end_ms").alias("ts_ms"),
            "step",
            "step_time_s",
            (
                pl.col("pg") * pl.col("_pg_noise") * per_step_peak * pl.col("peak_flops_per_chip")
            ).alias("model_flops"),
            (
                pl.col("hbm_fraction")
                * pl.col("_hbm_noise")
                * per_step_peak
                * pl.col("hbm_bytes_per_s")
            ).alias("hbm_bytes"),
            pl.col("chips_requested").alias("chips"),
            "flops_source",
        )
    )


def _distinct(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.unique(
        subset=[c for c in frame.columns if c != "job"], keep="first", maintain_order=True
    )


def gather_records(
    plans: list[JobPlan], traces: list[JobTrace], epoch_ms: int, rng: np.random.Generator
) -> FleetRecords:
    """The fleet's records; `epoch_ms` is the window's start, `rng` draws the profile sample."""
    jobs = _jobs_frame(plans)
    runtime = _distinct(_runtime(traces, jobs, epoch_ms))
    return FleetRecords(
        jobs=jobs,
        scheduler=_distinct(_scheduler(traces, jobs, epoch_ms)),
        runtime=runtime,
        profiles=_distinct(_profiles(runtime, jobs, rng)),
    )
