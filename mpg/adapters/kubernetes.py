"""`mpg import kubernetes`: Kueue Workloads, their pods and the events about them, and JobSet
restarts, as kubectl and event exporters export them, into scheduler events and attempt spans.

    mpg import kubernetes exports/ exporter/ --out traces --as-of 2026-11-20T16:00:00Z

Each Kueue `Workload` is one job (`namespace/name`, team = the namespace, queue = its
LocalQueue): `JOB_SUBMIT` at its creation with the accelerators its pod sets request and the chip
generation its node selector names; its chips held by its pods from binding to end where the
input shows them (`kubernetes_pods`), else by each admission until its eviction; `JOB_END` when
it finished, was deleted or deactivated. Each admission, and each JobSet restart within one, is
an attempt: one runtime `step` span (`allocation_spans`), so RG shows the attempts thrown away.
Every import re-reads what earlier imports into the root kept (`kubernetes_state`) and derives
every Workload from all of it (`kubernetes_derive`): a day imported after another writes what
both at once would. docs/adapters/kubernetes.md gives every choice made here and why.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from mpg.adapters import kubernetes_history as history
from mpg.adapters.canonical import QUARANTINE_SCHEMA, UTC_TIME, Batch, Conversion
from mpg.adapters.kubernetes_derive import SEALED, Derived, derive
from mpg.adapters.kubernetes_events import ADMISSION, BOTH, PODS
from mpg.adapters.kubernetes_read import Objects, read_objects
from mpg.adapters.kubernetes_state import FOLDER, RECORDS, ImportState, load_state, save_state
from mpg.adapters.kubernetes_state import SEALED as SEALED_SCHEMA
from mpg.core.errors import OptionsError
from mpg.core.locations import is_remote
from mpg.definitions.catalog import load_catalog

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


@dataclass(frozen=True)
class KubernetesOptions:
    accelerators: dict[str, str]
    chip_generation: str | None
    workload_class: str
    framework: str
    as_of: datetime | None
    runtime: bool
    owner_label: str | None
    keep: timedelta


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
        owner_label=args.owner_label,
        keep=timedelta(days=args.keep_days),
    )


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    """Every object of every file converted, quarantined or ignored, together with what earlier
    imports into the same root kept (`kubernetes_state`); one batch per Workload (named by its
    namespace and name, so importing it again replaces its records)."""
    opts = kubernetes_options(args)
    if is_remote(args.out):  # the state is swapped in as a whole folder, by renames
        raise OptionsError(
            f"--out {args.out}: the kubernetes import keeps its state in the trace root, which "
            "must be a local folder (its inputs may be on gs:// or s3://)"
        )
    root = Path(args.out)
    state = load_state(root)
    objs = read_objects(paths, state.records, opts.owner_label)
    # A record read again (the same file, line and text) is the one an earlier import kept.
    first = pl.col("rid").min().over("file", "line", "raw")
    again = objs.records.select("rid", first.alias("first")).filter(
        pl.col("rid") != pl.col("first")
    )
    objs = objs.without(again.get_column("rid"))
    derived = derive(objs, opts, state.sealed, state.stop)
    fates = pl.concat(
        [
            derived.records,
            again.join(derived.records.rename({"rid": "first"}), on="first").drop("first"),
        ]
    )
    mine = fates.filter(pl.col("rid") >= state.records.height)
    _check_as_of(opts, mine, derived.workloads)
    quarantine = _quarantine(objs, derived.records)
    kept, settled, sealed = _retained(objs, derived, opts.keep)
    batches = _batches(derived)
    names = {b.name for b in batches}
    done = set(sealed.join(derived.workloads, on=["namespace", "name", "uid"])["job_id"])
    gone = [Batch(name=n) for n in sorted(state.written - names - done)]
    save_state(
        root,
        ImportState(
            records=kept,
            settled=pl.concat([state.settled, settled]).unique(maintain_order=True),
            sealed=pl.concat([state.sealed, sealed]).unique(maintain_order=True),
            stop=derived.stop,
            written=frozenset((state.written | names) - done),
        ),
    )
    _say(derived, mine)
    ignored = mine.filter(pl.col("ignored").is_not_null()).group_by("ignored").len()
    quarantined = mine.filter(pl.col("reason").is_not_null()).height
    return Conversion(
        read=mine.height,
        converted=mine.height - quarantined - sum(ignored.get_column("len")),
        batches=[*batches, *gone],
        quarantine=pl.concat([state.settled, quarantine]).unique(maintain_order=True),
        ignored=dict(ignored.iter_rows()),
        quarantined=quarantined,
        quarantine_name=str(FOLDER),
    )


def _check_as_of(opts: KubernetesOptions, mine: pl.DataFrame, workloads: pl.DataFrame) -> None:
    """--as-of must not be before any time this import's records of a usable Workload state."""
    usable = workloads.filter(pl.col("problem").is_null()).select("wid")
    latest = mine.join(usable, on="wid").get_column("at").max()
    if opts.as_of is not None and latest is not None and opts.as_of < latest:
        shown = opts.as_of.strftime("%Y-%m-%dT%H:%M:%SZ")
        raise OptionsError(f"--as-of {shown} is before the input's latest time {latest}")


def _quarantine(objs: Objects, fates: pl.DataFrame) -> pl.DataFrame:
    """The quarantine rows of the records with a `reason` in `fates`."""
    return (
        objs.records.join(fates.filter(pl.col("reason").is_not_null()), on="rid")
        .sort("rid")
        .select("file", "line", "reason", "raw")
        .cast(QUARANTINE_SCHEMA)
    )


def _retained(
    objs: Objects, derived: Derived, keep: timedelta
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """What the next import needs of these records (RECORDS), the quarantine rows that can no
    longer change (of the records let go), and the Workloads whose records are now final
    (SEALED): those that ended `keep` before the end of the data. A record of no Workload is
    kept while it is that recent, in case its Workload comes later; one unusable in itself, or
    about a settled Workload, is let go at once; of the ResourceFlavors, the latest of each."""
    horizon = None if derived.stop is None else derived.stop - keep
    workloads = derived.workloads
    ended = pl.col("end_at").is_not_null() & (pl.col("end_at") < pl.lit(horizon, UTC_TIME))
    final_jobs = workloads.filter(ended & pl.col("problem").is_null()).select("job_id")
    final = workloads.filter(ended).select("job_id").vstack(final_jobs).unique()
    final_wids = workloads.join(final, on="job_id").select("wid")
    flavors = objs.flavors.join(objs.records.select("rid"), on="rid")
    stale_flavors = flavors.filter(pl.col("rid") != pl.col("rid").max().over("name"))
    recent = pl.col("at").is_not_null() & (pl.col("at") >= pl.lit(horizon, UTC_TIME))
    records = objs.records.join(derived.records, on="rid")
    let_go = (
        pl.col("intrinsic")
        | pl.col("wid").is_in(final_wids.get_column("wid").implode())
        | pl.col("ignored").eq_missing(SEALED)
        | (pl.col("wid").is_null() & (pl.col("kind") != "ResourceFlavor") & ~recent)
        | pl.col("rid").is_in(stale_flavors.get_column("rid").implode())
    )
    if horizon is None:
        let_go = pl.col("intrinsic") | pl.col("ignored").eq_missing(SEALED)
    records = records.with_columns(let_go.fill_null(False).alias("let_go"))
    gone = records.filter(pl.col("let_go"))
    kept = records.filter(~pl.col("let_go")).select(
        "file", "line", "raw", pl.when(pl.col("malformed")).then("problem").alias("malformed")
    )
    settled = (
        gone.filter(pl.col("reason").is_not_null())
        .select("file", "line", "reason", "raw")
        .cast(QUARANTINE_SCHEMA)
    )
    sealed = workloads.join(final_wids, on="wid").select("namespace", "name", "uid")
    return kept.cast(RECORDS), settled, sealed.cast(SEALED_SCHEMA)


def _batches(derived: Derived) -> list[Batch]:
    spans: dict[int, pl.DataFrame] = {}
    if derived.runtime is not None:
        spans = {
            w: f.drop("wid")
            for (w,), f in derived.runtime.partition_by("wid", as_dict=True).items()
        }
    return [
        Batch(name=frame.item(0, "job_id"), scheduler=frame.drop("wid"), runtime=spans.get(wid))
        for (wid,), frame in derived.scheduler.partition_by("wid", as_dict=True).items()
    ]


def _say(derived: Derived, mine: pl.DataFrame) -> None:
    """What the import could not see, once: Workloads whose history is incomplete and what to
    export instead, and where the allocation came from Kueue's admission for want of pods."""
    touched = derived.workloads.join(mine.select("wid").unique(), on="wid")
    incomplete = touched.filter(pl.col("problem").str.starts_with("history incomplete"))
    if incomplete.height:
        names = ", ".join(incomplete.get_column("job_id").sort().head(5))
        more = f" and {incomplete.height - 5} more" if incomplete.height > 5 else ""
        print(
            f"mpg import kubernetes: {incomplete.height} Workloads' histories are incomplete "
            f"({names}{more}): events expire an hour after they happen (kubectl get events "
            "shows only that hour); export them as they come, with an event exporter or GKE's "
            "Cloud Logging, and import those files with the Workloads",
            file=sys.stderr,
        )
    sources = touched.filter(pl.col("problem").is_null()).group_by("allocated_from").len()
    counts = dict(sources.iter_rows())
    fallback = counts.get(ADMISSION, 0) + counts.get(BOTH, 0)
    if fallback:
        print(
            f"mpg import kubernetes: allocation read from pods for {counts.get(PODS, 0)} "
            f"Workloads, from Kueue's admission for {counts.get(ADMISSION, 0)} (no pods in the "
            f"input) and for part of {counts.get(BOTH, 0)}: export the pods (kubectl get pods "
            "-A -o json, and their events) for when the chips were really held",
            file=sys.stderr,
        )
    if derived.earlier_admissions:
        print(
            f"mpg import kubernetes: {derived.earlier_admissions} earlier admissions of pod "
            "sets that allow partial admission are taken at the spec's count (only the latest "
            "admission's is recorded)",
            file=sys.stderr,
        )
