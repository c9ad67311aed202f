"""The canonical scheduler events of converted Workloads: `JOB_SUBMIT` at creation, the chips held
(by the pods where the input shows them, else by each admission), `JOB_END`
(docs/adapters/kubernetes.md).

A pod set admitted without its pods in the input is one task (`task_index` = its place in
`spec.podSets`), given `count` x per pod at each admission and released at each eviction; a pod
shown is a task of its own (numbered after the pod sets), given its chips when it was bound and
released when it ended. The spec adds up the chips its tasks hold, so a Workload is all
allocated only while every pod is bound and running, or (without pods) while admitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from mpg.adapters import canonical
from mpg.adapters import kubernetes_history as history

if TYPE_CHECKING:
    from mpg.adapters.kubernetes import KubernetesOptions

PODS, ADMISSION, BOTH = "pods", "admission", "pods+admission"


def admitted_pods(
    admissions: pl.DataFrame, podsets: pl.DataFrame, table: pl.DataFrame
) -> pl.DataFrame:
    """Each admission (`wid`, `at`, `latest`) with `expected`, the accelerator pods it admitted,
    per pod set too (`task_index`, `pods`, `chips`). The admission in the Workload's status is
    its latest; earlier ones are taken at the spec's count (Kueue records no other)."""
    count = (
        pl.when(pl.col("latest") & pl.col("admitted") & pl.col("assigned").is_not_null())
        .then("assigned")
        .otherwise("count")
    )
    return (
        admissions.join(table.select("wid", "admitted"), on="wid")
        .join(podsets, on="wid")
        .with_columns(count.alias("pods"))
        .with_columns(
            (pl.col("pods") * pl.col("per_pod")).alias("chips"),
            pl.col("pods").sum().over("wid", "at").alias("expected"),
        )
    )


def earlier_partial(admissions: pl.DataFrame) -> int:
    """Admissions of a pod set that allows partial admission whose count no object records (an
    admission before the latest): they are taken at the spec's count (said on stderr)."""
    earlier = admissions.filter(~(pl.col("latest") & pl.col("admitted")))
    return earlier.filter(pl.col("min_count").is_not_null()).height


def scheduler_events(
    table: pl.DataFrame,
    admissions: pl.DataFrame,
    folded: dict[str, pl.DataFrame],
    held: pl.DataFrame,
    decided: pl.DataFrame,
    opts: KubernetesOptions,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The canonical scheduler events of the converted Workloads (`table`), with `wid`; and
    per Workload where its allocation came from (`wid`, `allocated_from`: `pods` where every
    admission's pods are shown, `admission` where none's is, `pods+admission` else)."""
    ids = table.select("wid", "job_id")
    by_pods = decided.rename({"admitted_at": "at"}).with_columns(pl.lit(True).alias("by_pods"))
    per_admission = admissions.join(by_pods, on=["wid", "at"], how="left")
    schedule = (
        per_admission.filter(pl.col("by_pods").is_null() & (pl.col("chips") > 0))
        .join(ids, on="wid")
        .select("wid", pl.col("at").alias("ts"), "job_id", "task_index", "chips")
    )
    # A release closes the admission before it (at one instant a release comes first).
    closing = history.latest_before(
        folded["releases"],
        folded["admissions"].select("wid", pl.col("at").alias("admitted_at")),
        ("at", "admitted_at"),
        exact=False,
    ).join(by_pods.rename({"at": "admitted_at"}), on=["wid", "admitted_at"], how="left")
    release = (
        closing.filter(pl.col("by_pods").is_null())
        .join(ids, on="wid")
        .join(admissions.select("wid", "task_index").unique(), on="wid")
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
    pods_held = held.join(ids, on="wid")
    bound = pods_held.select("wid", pl.col("start").alias("ts"), "job_id", "task_index", "chips")
    unbound = pods_held.filter(pl.col("end").is_not_null()).select(
        "wid", pl.col("release").alias("type"), pl.col("end").alias("ts"), "job_id", "task_index"
    )
    shares = (
        per_admission.group_by("wid", "at")
        .agg(pl.col("by_pods").is_not_null().first())
        .group_by("wid")
        .agg(pl.col("by_pods").all().alias("all"), pl.col("by_pods").any().alias("any"))
    )
    source = (
        table.select("wid")
        .join(shares, on="wid", how="left")
        .select(
            "wid",
            pl.when(pl.col("all").fill_null(False))
            .then(pl.lit(PODS))
            .when(pl.col("any").fill_null(False))
            .then(pl.lit(BOTH))
            .otherwise(pl.lit(ADMISSION))
            .alias("allocated_from"),
        )
    )
    submit = table.join(source, on="wid").select(
        "wid",
        pl.col("created_at").alias("ts"),
        "job_id",
        "chips_requested",
        "chip_generation",
        pl.lit(opts.workload_class).alias("workload_class"),
        pl.lit(opts.framework).alias("framework"),
        "priority",
        "owner",
        "team",
        "queue",
        "topology",
        "allocated_from",
    )
    end = table.filter(pl.col("state").is_not_null()).select(
        "wid", pl.col("end_at").alias("ts"), "job_id", "state"
    )
    events = canonical.scheduler_events(
        submits=submit,
        schedules=[schedule, bound],
        releases=[release, unbound],
        ends=end,
        first_by=["wid"],
    )
    return events, source
