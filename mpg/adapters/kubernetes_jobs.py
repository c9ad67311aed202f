"""Which Kueue Workloads become jobs, with what `JOB_SUBMIT` and `JOB_END`, and which events,
JobSets and labelled Jobs or Pods belong to each (docs/adapters/kubernetes.md).

A Workload read several times (snapshots taken at different times) is one job: its newest
snapshot (latest conditions) gives the spec, the admission and the outcome; every snapshot's
conditions are history. Checks are Polars expressions over all Workloads at once.
"""

from __future__ import annotations

import polars as pl

from mpg.adapters.kubernetes_history import deactivation, parse_time
from mpg.adapters.kubernetes_read import Objects
from mpg.adapters.kubernetes_tables import SELECTOR, TPU

# Workload `Finished` reasons (Kueue apis/kueue/v1beta1/workload_types.go and Finish's callers).
FINISHED = {
    "Succeeded": "FINISHED",
    "Failed": "FAILED",
    "FailedToStart": "FAILED",
    "AdmissionChecksRejected": "CANCELLED",
    "OutOfSync": "CANCELLED",
    "OwnerNotFound": "CANCELLED",
    "WorkloadSliceReplaced": "CANCELLED",
}
OLD_FINISHED = "JobFinished"  # Kueue < 0.6: only the message says whether it succeeded


def _when(condition: pl.Expr, reason: str | pl.Expr) -> pl.Expr:
    return pl.when(condition).then(pl.lit(reason) if isinstance(reason, str) else reason)


def readable(frame: pl.DataFrame, objs: Objects) -> pl.DataFrame:
    """The rows of `frame` whose record has no problem."""
    return frame.join(objs.records.filter(pl.col("problem").is_null()).select("rid"), on="rid")


def snapshots(objs: Objects, conditions: pl.DataFrame) -> pl.DataFrame:
    """Readable Workloads, each with `wid`: the rid of the newest snapshot of the same object
    (namespace, name, uid), the one whose conditions (`at_time` parsed) are latest (the later
    read on a tie)."""
    latest = conditions.group_by("rid").agg(pl.col("at_time").max().alias("latest"))
    ident = pl.concat_str("namespace", "name", pl.col("uid").fill_null(""), separator="/")
    ranked = (
        readable(objs.workloads, objs)
        .join(latest, on="rid", how="left")
        .with_columns(ident.alias("ident"))
    )
    newest = (
        ranked.sort("latest", "rid", nulls_last=False)
        .group_by("ident")
        .agg(pl.col("rid").last().alias("wid"))
    )
    return ranked.join(newest, on="ident")


def tasks(
    objs: Objects, newest: pl.DataFrame, accelerators: dict[str, str], default: str | None
) -> pl.DataFrame:
    """One row per pod set that asks for accelerators (`wid`, `task_index`, `count`, `per_pod`,
    `assigned`, `min_count`, `topology`), with its chip generation (`gen`): the node selector's
    accelerator value, else the assigned ResourceFlavor's node label, mapped; else `default`
    (--chip-generation). `bad` says why a pod set has none."""
    flavors = readable(objs.flavors, objs).unique("name", keep="last", maintain_order=True)
    podsets = (
        objs.podsets.rename({"rid": "wid", "podset": "task_index"})
        .join(newest.select("wid"), on="wid")
        .filter(pl.col("resource").is_not_null())
        .join(flavors.select(pl.col("name").alias("flavor"), "tpu", "gpu"), on="flavor", how="left")
    )
    label = pl.when(pl.col("resource") == TPU).then("tpu").otherwise("gpu")
    value = pl.coalesce("selector", label)
    mapped = value.replace_strict(accelerators, default=None, return_dtype=pl.String)
    key = pl.col("resource").replace_strict(SELECTOR, return_dtype=pl.String)
    return podsets.with_columns(
        pl.when(value.is_null()).then(pl.lit(default, pl.String)).otherwise(mapped).alias("gen"),
        pl.coalesce(
            _when(
                value.is_null() & pl.lit(default is None),
                "no accelerator type: no node selector or flavor names it (--chip-generation)",
            ),
            _when(
                value.is_not_null() & mapped.is_null(),
                pl.format(
                    "unknown accelerator: {}={} (map it: --accelerator {}=ID)", key, value, value
                ),
            ),
        ).alias("bad"),
    )


def jobs(shots: pl.DataFrame, conditions: pl.DataFrame, podsets: pl.DataFrame) -> pl.DataFrame:
    """One row per Workload (`wid`), from its newest snapshot and every snapshot's `conditions`
    (with `wid` and `at_time`): `job_id`, `created_at`, `chips_requested`,
    `chip_generation`, `topology`, `priority`, `end_at` and `state` (null: still open), the
    snapshot's `evictions`, and `problem` (null when it can be converted)."""
    true = pl.col("status") == "True"
    finished = (
        conditions.filter((pl.col("type") == "Finished") & true)
        .sort("at_time")
        .group_by("wid")
        .agg(
            pl.col("at_time").last().alias("finished_at"),
            pl.col("reason").last().alias("finished_reason"),
            pl.col("message").last().fill_null("").alias("finished_message"),
        )
    )
    deactivated = (
        conditions.filter((pl.col("type") == "Evicted") & true & deactivation("reason"))
        .group_by("wid")
        .agg(pl.col("at_time").max().alias("deactivated_at"))
    )
    unreadable = (
        conditions.filter(pl.col("at").is_not_null() & pl.col("at_time").is_null())
        .group_by("wid")
        .agg(pl.col("type").first().alias("bad_condition"))
    )
    per_job = podsets.group_by("wid").agg(
        pl.col("bad").drop_nulls().first().alias("generation_problem"),
        pl.col("gen").drop_nulls().n_unique().alias("generations"),
        pl.col("gen").drop_nulls().first().alias("chip_generation"),
        (pl.col("count") * pl.col("per_pod")).sum().alias("chips_requested"),
        pl.col("topology").drop_nulls().first().alias("topology"),
    )
    finished_reason = pl.col("finished_reason")
    state_finished = (
        pl.when(finished_reason == OLD_FINISHED)
        .then(
            pl.when(pl.col("finished_message").str.ends_with("finished successfully"))
            .then(pl.lit("FINISHED"))
            .otherwise(pl.lit("FAILED"))
        )
        .otherwise(finished_reason.replace_strict(FINISHED, default=None))
    )
    table = (
        shots.filter(pl.col("rid") == pl.col("wid"))
        .join(per_job, on="wid", how="left")
        .join(finished, on="wid", how="left")
        .join(deactivated, on="wid", how="left")
        .join(unreadable, on="wid", how="left")
        .with_columns(
            pl.concat_str("namespace", "name", separator="/").alias("job_id"),
            parse_time("created").alias("created_at"),
            parse_time("deleted").alias("deleted_at"),
            state_finished.alias("finished_state"),
        )
    )
    is_finished = pl.col("finished_at").is_not_null()
    ended = is_finished | pl.col("deleted").is_not_null() | ~pl.col("active")
    table = table.with_columns(
        pl.when(is_finished)
        .then("finished_at")
        .when(pl.col("deleted").is_not_null())
        .then("deleted_at")
        .when(~pl.col("active"))
        .then("deactivated_at")
        .alias("end_at"),
        pl.when(is_finished)
        .then("finished_state")
        .when(ended)
        .then(pl.lit("CANCELLED"))
        .alias("state"),
    )
    replaced = pl.col("created_at") < pl.col("created_at").max().over("job_id")
    problem = pl.coalesce(
        _when(pl.col("created_at").is_null(), "unparseable time: metadata.creationTimestamp"),
        _when(
            pl.col("deleted").is_not_null() & pl.col("deleted_at").is_null(),
            "unparseable time: metadata.deletionTimestamp",
        ),
        _when(
            pl.col("bad_condition").is_not_null(),
            pl.format("unparseable time: condition {}", "bad_condition"),
        ),
        _when(
            pl.col("chips_requested").fill_null(0) == 0,
            "no accelerator: no pod set requests google.com/tpu or nvidia.com/gpu",
        ),
        pl.col("generation_problem"),
        _when(pl.col("generations") > 1, "pod sets on accelerators of different generations"),
        _when(
            is_finished & pl.col("finished_state").is_null(),
            pl.format("unknown Finished reason: {}", finished_reason),
        ),
        _when(ended & pl.col("end_at").is_null(), "deactivated at an unknown time"),
        _when(pl.col("end_at") < pl.col("created_at"), "ends before its creation"),
        _when(replaced, "replaced by a later Workload of the same name"),
    )
    return table.with_columns(problem.alias("problem"))


def compatible(left: str, right: str) -> pl.Expr:
    """Two uids that do not contradict: equal, or one of them not known."""
    return pl.col(left).is_null() | pl.col(right).is_null() | (pl.col(left) == pl.col(right))


def links(
    objs: Objects,
    shots: pl.DataFrame,
    events: pl.DataFrame,
    pods: pl.DataFrame,
    podsets: pl.DataFrame,
) -> pl.DataFrame:
    """Each readable event, JobSet, Job and Pod (`rid`) with the Workload it is about (`wid`),
    `matches` (how many Workloads it could be: 0 for none, more than 1 for a name that
    several share) and `about`, what it is (`Pod events`, `JobSets`...). An event is about a
    Workload by its name and uid; about its owner (a JobSet, a Job) through `ownerReferences`;
    about one of a JobSet's Jobs by the Job's labels or name (`<JobSet>-<replicated job>-<n>`);
    about a pod through `pods` (`key`, `wid`, `matches`, from `kubernetes_pods.link_pods`). A
    JobSet, its labelled Jobs and Pods belong to the Workload its JobSet owns; a Job that is a
    Workload's owner, to that Workload."""
    workloads = shots.filter(pl.col("rid") == pl.col("wid")).select(
        "wid", "namespace", "name", "uid", "owner_kind", "owner_name", "owner_uid"
    )
    jobsets = workloads.filter(pl.col("owner_kind") == "JobSet")
    about = pl.col("about_kind")
    children = readable(objs.jobs, objs).filter(pl.col("jobset").is_not_null())
    replicated = jobsets.join(podsets.select("wid", pl.col("name").alias("set")), on="wid")
    replicated = replicated.select(
        "wid", "namespace", pl.concat_str("owner_name", "set", separator="-").alias("prefix")
    )
    owned_jobs = pl.concat(
        [
            children.join(
                jobsets, left_on=["namespace", "jobset"], right_on=["namespace", "owner_name"]
            ).select("wid", "namespace", "name"),
            readable(objs.jobs, objs)
            .with_columns(pl.col("name").str.replace(r"-[0-9]+$", "").alias("prefix"))
            .join(replicated, on=["namespace", "prefix"])
            .select("wid", "namespace", "name"),
        ]
    ).unique()
    job_events = events.filter(about == "Job").with_columns(
        pl.col("about_name").str.replace(r"-[0-9]+$", "").alias("prefix")
    )
    found = pl.concat(
        [
            events.filter(about == "Workload")
            .join(workloads, left_on=["namespace", "about_name"], right_on=["namespace", "name"])
            .filter(compatible("about_uid", "uid"))
            .select("rid", "wid"),
            events.join(
                workloads,
                left_on=["namespace", "about_kind", "about_name"],
                right_on=["namespace", "owner_kind", "owner_name"],
            )
            .filter(compatible("about_uid", "owner_uid"))
            .select("rid", "wid"),
            job_events.join(replicated, on=["namespace", "prefix"]).select("rid", "wid"),
            events.filter(about == "Job")
            .join(owned_jobs, left_on=["namespace", "about_name"], right_on=["namespace", "name"])
            .select("rid", "wid"),
            events.filter(about == "Pod")
            .with_columns(pl.concat_str("namespace", "about_name", separator="/").alias("key"))
            .join(pods, on="key")
            .select("rid", "wid"),
            readable(objs.jobsets, objs)
            .join(jobsets, left_on=["namespace", "name"], right_on=["namespace", "owner_name"])
            .filter(compatible("uid", "owner_uid"))
            .select("rid", "wid"),
            readable(objs.jobs, objs)
            .join(
                workloads.filter(pl.col("owner_kind") == "Job"),
                left_on=["namespace", "name"],
                right_on=["namespace", "owner_name"],
            )
            .filter(compatible("uid", "owner_uid"))
            .select("rid", "wid"),
            readable(objs.children, objs)
            .join(jobsets, left_on=["namespace", "jobset"], right_on=["namespace", "owner_name"])
            .filter(compatible("jobset_uid", "owner_uid"))
            .select("rid", "wid"),
            readable(objs.pods, objs)
            .with_columns(pl.concat_str("namespace", "name", separator="/").alias("key"))
            .join(pods, on="key")
            .select("rid", "wid"),
        ]
    ).unique()
    counted = found.group_by("rid").agg(pl.col("wid").first(), pl.len().alias("matches"))
    kinds = ["Event", "JobSet", "Job", "Pod"]
    kind = pl.col("kind")
    return (
        readable(objs.records, objs)
        .filter(kind.is_in(kinds))
        .select("rid", "kind")
        .join(events.select("rid", "about_kind"), on="rid", how="left")
        .join(counted, on="rid", how="left")
        .select(
            "rid",
            pl.when(pl.col("matches") == 1).then("wid").alias("wid"),
            pl.col("matches").fill_null(0),
            pl.when(kind == "Event")
            .then(pl.format("{} events", about.fill_null("?")))
            .otherwise(pl.format("{}s", kind))
            .alias("about"),
            about.alias("about_kind"),
        )
    )
