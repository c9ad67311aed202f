"""`mpg import kubernetes`: Kueue Workloads, the events about them and JobSet restarts, as kubectl
exports them, into scheduler events and attempt spans.

    mpg import kubernetes workloads.json events.json jobs.json --out traces

Each Kueue `Workload` is one job (`namespace/name`): `JOB_SUBMIT` at its creation with the
accelerators its pod sets request (`google.com/tpu` or `nvidia.com/gpu`, count x per pod) and the
chip generation its node selector names; one task per pod set, given its chips at each admission
and released at each eviction (`TASK_LOST` for node failures); `JOB_END` when it finished, was
deleted or deactivated. Each admission, and each JobSet restart within one, is an attempt: one
runtime `step` span (`allocation_spans`), so RG shows the attempts that were thrown away.
docs/adapters.md (section kubernetes) gives every choice made here and why.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from mpg.adapters import kubernetes_history as history
from mpg.adapters.canonical import QUARANTINE_SCHEMA, UTC_TIME, Batch, Conversion
from mpg.adapters.jobs import allocation_spans
from mpg.adapters.kubernetes_jobs import jobs, links, readable, snapshots, tasks
from mpg.adapters.kubernetes_read import Objects, read_objects
from mpg.catalog import load_catalog
from mpg.errors import OptionsError

# GKE's accelerator node label values -> catalog ids, only where the catalog's figures are that
# chip's: nvidia-tesla-a100 is the 40 GB A100 (1555 GB/s HBM, not the catalog's 2039).
ACCELERATORS = {
    "tpu-v4-podslice": "tpu-v4",
    "tpu-v5-lite-podslice": "tpu-v5e",
    "tpu-v5-lite-device": "tpu-v5e",
    "tpu-v5p-slice": "tpu-v5p",
    "tpu-v6e-slice": "tpu-v6e",
    "tpu7x": "tpu-v7",
    "nvidia-a100-80gb": "gpu-a100",
    "nvidia-h100-80gb": "gpu-h100",
    "nvidia-h100-mega-80gb": "gpu-h100",
    "nvidia-h200-141gb": "gpu-h200",
    "nvidia-b200": "gpu-b200",
    "nvidia-tesla-v100": "gpu-v100",
    "nvidia-tesla-p100": "gpu-p100",
    "nvidia-tesla-t4": "gpu-t4",
}
NOT_CONVERTED = "its Workload was not converted"


@dataclass(frozen=True)
class KubernetesOptions:
    accelerators: dict[str, str]
    chip_generation: str | None
    workload_class: str
    framework: str
    as_of: datetime | None
    runtime: bool


def kubernetes_options(args: argparse.Namespace) -> KubernetesOptions:
    """The options, checked: catalog generations, and an instant for --as-of."""
    generations = load_catalog().generations
    for generation in [g for _, g in args.accelerator] + [args.chip_generation]:
        if generation is not None and generation not in generations:
            raise OptionsError(
                f"{generation!r} is not in the chip catalog ({', '.join(generations)})"
            )
    as_of = None
    if args.as_of is not None:
        as_of = pl.DataFrame({"t": [args.as_of]}).select(history.parse_time("t")).item()
        if as_of is None:
            raise OptionsError(f"--as-of {args.as_of!r} is not an RFC 3339 instant")
    return KubernetesOptions(
        accelerators={**ACCELERATORS, **dict(args.accelerator)},
        chip_generation=args.chip_generation,
        workload_class=args.workload_class,
        framework=args.framework,
        as_of=as_of,
        runtime=not args.no_runtime,
    )


@dataclass(frozen=True)
class History:
    """What `_history` found, over all Workloads."""

    transitions: pl.DataFrame  # wid, at, kind, cause, source
    problems: pl.DataFrame  # wid, problem: why the Workload's history is incomplete
    unreadable: pl.DataFrame  # rid, problem: records whose own time cannot be read
    latest: datetime | None  # the latest time of a convertible Workload's records


def _history(
    objs: Objects, conditions: pl.DataFrame, table: pl.DataFrame, linked: pl.DataFrame
) -> History:
    """Every Workload's transitions: its conditions, its events, its JobSet's restarts."""
    owned = linked.filter(pl.col("wid").is_not_null()).select("rid", "wid")
    events = (
        readable(objs.events, objs)
        .join(owned, on="rid")
        .with_columns(
            history.parse_time("first").alias("first_at"),
            history.parse_time("last").alias("last_at"),
        )
    )
    children = (
        readable(objs.children, objs)
        .join(owned, on="rid")
        .with_columns(history.parse_time("created").alias("created_at"))
    )
    unreadable = pl.concat(
        [
            events.filter(pl.col("first_at").is_null()).select(
                "rid", pl.lit("unparseable time: eventTime or firstTimestamp").alias("problem")
            ),
            children.filter(pl.col("created_at").is_null()).select(
                "rid", pl.lit("unparseable time: metadata.creationTimestamp").alias("problem")
            ),
        ]
    )
    events = events.filter(pl.col("first_at").is_not_null())
    known, missing = history.occurrences(events)
    from_events = history.event_transitions(events, known)
    kueue = history.merged(
        history.condition_transitions(conditions),
        from_events.filter(pl.col("kind") != history.RESTART),
    )
    restarts, restart_problems = history.restart_transitions(
        from_events.filter(pl.col("kind") == history.RESTART),
        readable(objs.jobsets, objs).join(owned, on="rid"),
        children.filter(pl.col("created_at").is_not_null()),
    )
    incomplete = missing.join(events.select("identity", "wid").unique(), on="identity")
    # The latest time of any record of a Workload that can be converted (a quarantined one's
    # times may be anything) stands for the instant the export was taken.
    usable = table.filter(pl.col("problem").is_null()).select("wid")
    times = pl.concat(
        [
            conditions.join(usable, on="wid").get_column("at_time"),
            known.join(events.select("rid", "wid"), on="rid").join(usable, on="wid")["at"],
            children.join(usable, on="wid").get_column("created_at"),
            usable.join(table, on="wid").get_column("created_at"),
            usable.join(table, on="wid").get_column("end_at"),
        ]
    )
    return History(
        transitions=pl.concat([kueue, restarts]),
        problems=pl.concat([incomplete.select("wid", "problem"), restart_problems]),
        unreadable=unreadable,
        latest=times.max(),
    )


def _scheduler(
    table: pl.DataFrame,
    podsets: pl.DataFrame,
    folded: dict[str, pl.DataFrame],
    opts: KubernetesOptions,
) -> pl.DataFrame:
    """The canonical scheduler events of the converted Workloads (`table`), with `wid`."""
    submit = table.select(
        "wid",
        pl.lit("JOB_SUBMIT").alias("type"),
        pl.col("created_at").alias("ts"),
        "job_id",
        "chips_requested",
        "chip_generation",
        pl.lit(opts.workload_class).alias("workload_class"),
        pl.lit(opts.framework).alias("framework"),
        "priority",
        pl.col("namespace").alias("owner"),
        "topology",
    )
    ids = table.select("wid", "job_id", "admitted")
    # The admission in the Workload's status is its latest; earlier ones held the spec's count.
    count = (
        pl.when(pl.col("latest") & pl.col("admitted") & pl.col("assigned").is_not_null())
        .then("assigned")
        .otherwise("count")
    )
    schedule = (
        folded["admissions"]
        .join(ids, on="wid")
        .join(podsets, on="wid")
        .select(
            "wid",
            pl.lit("TASK_SCHEDULE").alias("type"),
            pl.col("at").alias("ts"),
            "job_id",
            "task_index",
            (count * pl.col("per_pod")).alias("chips"),
        )
        .filter(pl.col("chips") > 0)
    )
    release = (
        folded["releases"]
        .join(ids, on="wid")
        .join(podsets, on="wid")
        .select(
            "wid",
            pl.when(pl.col("cause") == history.NODE_FAILURES)
            .then(pl.lit("TASK_LOST"))
            .otherwise(pl.lit("TASK_EVICT"))
            .alias("type"),
            pl.col("at").alias("ts"),
            "job_id",
            "task_index",
        )
    )
    end = table.filter(pl.col("state").is_not_null()).select(
        "wid", pl.lit("JOB_END").alias("type"), pl.col("end_at").alias("ts"), "job_id", "state"
    )
    order = {"JOB_SUBMIT": 0, "TASK_EVICT": 1, "TASK_LOST": 1, "TASK_SCHEDULE": 2, "JOB_END": 3}
    events = pl.concat([submit, schedule, release, end], how="diagonal")
    rank = pl.col("type").replace_strict(order, return_dtype=pl.Int64)
    return events.sort(pl.col("wid"), pl.col("ts"), rank, pl.col("task_index"), nulls_last=True)


def _unknown_counts(
    folded: dict[str, pl.DataFrame], podsets: pl.DataFrame, table: pl.DataFrame
) -> int:
    """Admissions of a pod set that allows partial admission whose count no object records (an
    admission before the latest): they are taken as the spec's count (said on stderr)."""
    earlier = folded["admissions"].join(table.select("wid", "admitted"), on="wid")
    earlier = earlier.filter(~(pl.col("latest") & pl.col("admitted")))
    return earlier.join(podsets.filter(pl.col("min_count").is_not_null()), on="wid").height


def _quarantine(objs: Objects, rows: pl.DataFrame) -> pl.DataFrame:
    """The quarantine rows of the records with a `reason` in `rows` (`rid`, `reason`)."""
    return (
        objs.records.join(rows, on="rid")
        .sort("rid")
        .select("file", "line", "reason", "raw")
        .cast(QUARANTINE_SCHEMA)
    )


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    """Every object of every file converted or quarantined; one batch per Workload (named by
    its namespace and name, so importing it again replaces its records)."""
    opts = kubernetes_options(args)
    objs = read_objects(paths)
    parsed = objs.conditions.with_columns(history.parse_time("at").alias("at_time"))
    shots = snapshots(objs, parsed)
    conditions = parsed.join(shots.select("rid", "wid"), on="rid")  # of every snapshot
    newest = shots.filter(pl.col("rid") == pl.col("wid"))
    podsets = tasks(objs, newest, opts.accelerators, opts.chip_generation)
    table = jobs(shots, conditions, podsets)
    linked = links(objs, shots)
    found = _history(objs, conditions, table, linked)
    if opts.as_of is not None and found.latest is not None and opts.as_of < found.latest:
        raise OptionsError(f"--as-of {args.as_of} is before the input's latest time {found.latest}")
    stop = opts.as_of or found.latest
    folded = history.fold(
        found.transitions,
        table.filter(pl.col("problem").is_null()).with_columns(
            pl.lit(stop, UTC_TIME).alias("stop_at")
        ),
    )
    problems = (
        pl.concat(
            [
                table.filter(pl.col("problem").is_not_null()).select("wid", "problem"),
                found.problems,
                folded["problems"],
            ]
        )
        .group_by("wid", maintain_order=True)
        .agg(pl.col("problem").first())
    )
    good = table.join(problems, on="wid", how="anti")
    ok = good.select("wid")
    records = objs.records.join(shots.select("rid", "wid"), on="rid", how="left").join(
        linked.select("rid", pl.col("wid").alias("linked"), "link_problem"), on="rid", how="left"
    )
    owner = pl.coalesce("wid", "linked")
    reasons = (
        records.join(found.unreadable.rename({"problem": "time_problem"}), on="rid", how="left")
        .join(
            problems.rename({"wid": "owner_wid", "problem": "wid_problem"}),
            left_on=owner,
            right_on="owner_wid",
            how="left",
        )
        .select(
            "rid",
            pl.coalesce(
                "problem",
                "link_problem",
                "time_problem",
                pl.when(pl.col("wid").is_not_null()).then("wid_problem"),
                pl.when(pl.col("wid_problem").is_not_null()).then(pl.lit(NOT_CONVERTED)),
            ).alias("reason"),
        )
    )
    bad = reasons.filter(pl.col("reason").is_not_null())
    admitted = podsets.join(ok, on="wid")
    scheduler = _scheduler(good, admitted, folded, opts)
    spans: dict[int, pl.DataFrame] = {}
    if opts.runtime:
        segments = folded["segments"].join(good.select("wid", "job_id"), on="wid")
        runtime = allocation_spans(segments).with_columns(segments.get_column("wid"))
        spans = {w: f.drop("wid") for (w,), f in runtime.partition_by("wid", as_dict=True).items()}
    unknown = _unknown_counts(folded, admitted, good)
    if unknown:
        print(
            f"mpg import kubernetes: {unknown} earlier admissions of pod sets that allow partial "
            "admission are taken at the spec's count (only the latest admission's is recorded)",
            file=sys.stderr,
        )
    batches = [
        Batch(name=frame.item(0, "job_id"), scheduler=frame.drop("wid"), runtime=spans.get(wid))
        for (wid,), frame in scheduler.partition_by("wid", as_dict=True).items()
    ]
    return Conversion(
        read=objs.records.height,
        converted=objs.records.height - bad.height,
        batches=batches,
        quarantine=_quarantine(objs, bad),
    )
