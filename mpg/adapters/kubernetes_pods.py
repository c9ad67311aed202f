"""When a Workload's pods held their accelerators: each pod from the moment it was bound to a node
until it ended, was told to stop, or lost its node (docs/adapters/kubernetes.md).

Kueue's admission is a promise of quota, not chips in use: pods are bound 17-60 s after it, a pod
may never get a node (a tainted node) until Kueue gives up on it, and a JobSet that lost a node
holds fewer chips than it asked for until its restarted pods are all bound again. So where the
input shows an attempt's pods (`kubectl get pods -o json` snapshots, the events about them), the
pods decide when every chip was held; where it does not, the admission does, as before.

A pod is known by its namespace and name (a pod's name is unique while it exists, and the Job
controller gives each pod a random suffix, so a name is not used twice). Its facts:
- **bound** at its `PodScheduled` condition's time (the condition is written in the binding
  itself), else its `Scheduled` event, else `status.startTime`;
- **ended** at the earliest of: its containers all terminated (`finishedAt`; phase `Succeeded`:
  done, else failed; a pod in such a phase with no container's end, at its `Ready` condition
  turning False), the deletion request (`deletionTimestamp` less the grace period), a
  `DisruptionTarget` condition, and the events `Killing` (not "will be restarted": a container
  restarted in its pod keeps the chips), `TaintManagerEviction` ("Marking for deletion"),
  `NodeControllerEviction`, `Preempted`, `Preempting` and `Evicted`; and `NodeNotReady` (its node
  stopped answering) where one of those follows it with no `Ready` condition between: the node
  was lost from then, not paused;
- a pod with neither an end nor a later sighting holds until its attempt ends.
"""

from __future__ import annotations

import polars as pl

from mpg.adapters.canonical import UTC_TIME
from mpg.adapters.kubernetes_history import NODE_FAILURES, latest_before, parse_time
from mpg.adapters.kubernetes_jobs import compatible

FINISH, FAIL, EVICT, LOST = "TASK_FINISH", "TASK_FAIL", "TASK_EVICT", "TASK_LOST"
# Event reasons that end a pod's hold, and how it gave its chips back.
END_EVENTS = {
    "Killing": EVICT,  # the kubelet stops its containers (deletion, preemption, eviction)
    "TaintManagerEviction": LOST,  # a NoExecute taint: the node is unreachable or not ready
    "NodeControllerEviction": LOST,  # the node controller deleted the pods of a lost node
    "Preempted": EVICT,  # the scheduler preempted it for a pod of higher priority
    "Preempting": EVICT,  # the kubelet preempted it for a critical pod
    "Evicted": EVICT,  # the kubelet evicted it under node pressure
}
NODE_NOT_READY = "NodeNotReady"
TERMINAL = ("Succeeded", "Failed")
LOST_DISRUPTIONS = ("DeletionByTaintManager", "DeletionByPodGC")
# The random suffix the API server appends to a generated name (apimachinery's rand.String).
SUFFIX = r"-[bcdfghjklmnpqrstvwxz2456789]{5}$"
INDEX = r"-[0-9]+$"

POD_LINK = {"key": pl.String, "wid": pl.Int64, "podset": pl.String}
HOLD = {
    "wid": pl.Int64,
    "task_index": pl.Int64,
    "chips": pl.Int64,
    "start": UTC_TIME,
    "end": UTC_TIME,  # null: held until the job's end or the end of the data
    "release": pl.String,
}


def _key(namespace: str, name: str) -> pl.Expr:
    return pl.concat_str(namespace, name, separator="/").alias("key")


def pod_facts(pods: pl.DataFrame, conditions: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """One row per pod (`key`) that an object or an event shows: its link fields (from its
    objects), `chips`, `first_at` (created, or first heard of), `bound`, `bind_at`, `pod_end` and
    `release` (how it ended; null while it runs)."""
    objects = pods.with_columns(
        _key("namespace", "name"),
        parse_time("created").alias("created_at"),
        parse_time("started").alias("started_at"),
        parse_time("finished").alias("finished_at"),
        (parse_time("deleted") - pl.duration(seconds=pl.col("grace").fill_null(0))).alias(
            "delete_at"
        ),
    )
    first = lambda c: pl.col(c).drop_nulls().first()  # noqa: E731
    facts = objects.group_by("key").agg(
        *(
            first(c)
            for c in (
                "namespace",
                "name",
                "uid",
                "owner_kind",
                "owner_name",
                "owner_uid",
                "jobset",
                "jobset_uid",
                "rjob",
                "podset",
                "workload",
                "job",
                "owner_label",
                "node",
            )
        ),
        pl.col("chips").max(),
        pl.col("created_at").min(),
        pl.col("started_at").min(),
    )
    conds = conditions.join(objects.select("rid", "key"), on="rid").filter(
        (pl.col("status") == "True") & pl.col("at_time").is_not_null()
    )
    on_pod = events.filter(pl.col("about_kind") == "Pod").with_columns(
        _key("namespace", "about_name")
    )
    bound = pl.concat(
        [
            conds.filter(pl.col("type") == "PodScheduled").select(
                "key", pl.col("at_time").alias("at"), pl.lit(0).alias("rank")
            ),
            on_pod.filter(pl.col("reason") == "Scheduled").select(
                "key", pl.col("first_at").alias("at"), pl.lit(1).alias("rank")
            ),
            objects.filter(pl.col("node").is_not_null()).select(
                "key", pl.col("started_at").alias("at"), pl.lit(2).alias("rank")
            ),
        ]
    ).drop_nulls("at")
    # The best source that knows the binding: the condition, the event, the kubelet's start.
    bind = bound.sort("rank", "at").group_by("key").agg(pl.col("at").first().alias("bind_at"))
    message = pl.col("message").fill_null("")
    outcome = pl.when(pl.col("phase") == "Succeeded").then(pl.lit(FINISH)).otherwise(pl.lit(FAIL))
    # A pod that ended with no container's end recorded (evicted before its containers ran, its
    # node gone) shows it in its Ready condition, False from then.
    unready = (
        objects.filter(pl.col("phase").is_in(TERMINAL) & pl.col("finished_at").is_null())
        .join(
            conditions.filter((pl.col("type") == "Ready") & (pl.col("status") == "False")),
            on="rid",
        )
        .select("key", pl.col("at_time").alias("at"), outcome.alias("release"))
    )
    ends = pl.concat(
        [
            objects.filter(pl.col("finished_at").is_not_null()).select(
                "key", pl.col("finished_at").alias("at"), outcome.alias("release")
            ),
            unready,
            objects.filter(pl.col("delete_at").is_not_null()).select(
                "key", pl.col("delete_at").alias("at"), pl.lit(EVICT).alias("release")
            ),
            conds.filter(pl.col("type") == "DisruptionTarget").select(
                "key",
                pl.col("at_time").alias("at"),
                pl.when(pl.col("reason").is_in(LOST_DISRUPTIONS))
                .then(pl.lit(LOST))
                .otherwise(pl.lit(EVICT))
                .alias("release"),
            ),
            on_pod.filter(
                pl.col("reason").is_in(list(END_EVENTS))
                & ~((pl.col("reason") == "Killing") & message.str.contains("will be restarted"))
                & ~(
                    (pl.col("reason") == "TaintManagerEviction")
                    & ~message.str.starts_with("Marking for deletion")
                )
            ).select(
                "key",
                pl.col("first_at").alias("at"),
                pl.col("reason")
                .replace_strict(END_EVENTS, return_dtype=pl.String)
                .alias("release"),
            ),
        ]
    ).drop_nulls("at")
    ended = (
        ends.sort("at", "release")
        .group_by("key")
        .agg(pl.col("at").first().alias("ended_at"), pl.col("release").first())
    )
    ready = (
        conds.filter(pl.col("type") == "Ready")
        .group_by("key")
        .agg(pl.col("at_time").max().alias("ready_at"))
    )
    lost = (
        on_pod.filter(pl.col("reason") == NODE_NOT_READY)
        .join(ended, on="key")
        .join(ready, on="key", how="left")
        .filter(
            (pl.col("first_at") < pl.col("ended_at"))
            & (pl.col("ready_at").is_null() | (pl.col("first_at") > pl.col("ready_at")))
        )
        .group_by("key")
        .agg(pl.col("first_at").min().alias("lost_at"))
    )
    heard = on_pod.group_by("key").agg(
        pl.col("namespace").first().alias("event_namespace"),
        pl.col("about_name").first().alias("event_name"),
        pl.col("first_at").min().alias("heard_at"),
    )
    keys = pl.concat([facts.select("key"), heard.select("key")]).unique()
    out = (
        keys.join(facts, on="key", how="left")
        .join(heard, on="key", how="left")
        .join(bind, on="key", how="left")
        .join(ended, on="key", how="left")
        .join(lost, on="key", how="left")
    )
    lost_first = pl.col("lost_at").is_not_null()
    return out.select(
        pl.exclude(
            "namespace",
            "name",
            "event_namespace",
            "event_name",
            "heard_at",
            "created_at",
            "started_at",
            "ended_at",
            "lost_at",
            "release",
        ),
        pl.coalesce("namespace", "event_namespace").alias("namespace"),
        pl.coalesce("name", "event_name").alias("name"),
        pl.min_horizontal("created_at", "heard_at").alias("first_at"),
        (pl.col("node").is_not_null() | pl.col("bind_at").is_not_null()).alias("bound"),
        pl.when(lost_first).then("lost_at").otherwise("ended_at").alias("pod_end"),
        pl.when(lost_first).then(pl.lit(LOST)).otherwise("release").alias("release"),
        pl.col("uid").is_not_null().alias("has_object"),
    )


def link_pods(facts: pl.DataFrame, workloads: pl.DataFrame, podsets: pl.DataFrame) -> pl.DataFrame:
    """Each pod with the Workload it ran for (`key`, `wid`, `podset`, and `matches`: the number
    of Workloads it could be, 1 where it is linked): through its object's Kueue annotation,
    JobSet label, controller or job-name label; a pod known only from events through its
    generated name (`<Job>-[<index>-]<suffix>`, a JobSet's Jobs being
    `<JobSet>-<replicated job>-<index>`), as the Job controller names pods."""
    wl = workloads.select(
        "wid", "namespace", "name", "uid", "owner_kind", "owner_name", "owner_uid"
    )
    jobsets = wl.filter(pl.col("owner_kind") == "JobSet")
    jobs = wl.filter(pl.col("owner_kind") == "Job")
    replicated = jobsets.join(podsets.select("wid", pl.col("name").alias("set")), on="wid")
    replicated = replicated.with_columns(
        pl.concat_str("owner_name", "set", separator="-").alias("prefix")
    )
    objects = facts.filter(pl.col("has_object")).rename({"uid": "pod_uid"})
    stem = pl.col("name").str.replace(SUFFIX, "")
    named = (
        facts.filter(~pl.col("has_object"))
        .with_columns(pl.when(stem != pl.col("name")).then(stem).alias("k1"))
        .with_columns(pl.col("k1").str.replace(INDEX, "").alias("k2"))
        .with_columns(pl.col("k2").str.replace(INDEX, "").alias("k3"))
    )

    def found(frame: pl.DataFrame, podset: pl.Expr) -> pl.DataFrame:
        return frame.select("key", "wid", podset.alias("podset"))

    ns = "namespace"
    candidates = [
        found(objects.join(wl, left_on=[ns, "workload"], right_on=[ns, "name"]), pl.col("podset")),
        found(
            objects.join(jobsets, left_on=[ns, "jobset"], right_on=[ns, "owner_name"]).filter(
                compatible("jobset_uid", "owner_uid_right")
            ),
            pl.coalesce("podset", "rjob"),
        ),
        found(
            objects.join(wl, on=[ns, "owner_kind", "owner_name"]).filter(
                compatible("owner_uid", "owner_uid_right")
            ),
            pl.col("podset"),
        ),
        found(
            objects.join(jobs, left_on=[ns, "job"], right_on=[ns, "owner_name"]), pl.col("podset")
        ),
        found(
            facts.join(
                wl.filter(pl.col("owner_kind") == "Pod"),
                left_on=[ns, "name"],
                right_on=[ns, "owner_name"],
            ),
            pl.col("podset"),
        ),
        *(
            found(named.join(jobs, left_on=[ns, k], right_on=[ns, "owner_name"]), pl.col("podset"))
            for k in ("k1", "k2")
        ),
        *(
            found(
                named.join(replicated, left_on=[ns, k], right_on=[ns, "prefix"]),
                pl.col("set"),
            )
            for k in ("k2", "k3")
        ),
    ]
    return (
        pl.concat(candidates, how="vertical_relaxed")
        .group_by("key", "wid")
        .agg(pl.col("podset").drop_nulls().first())
        .with_columns(pl.len().over("key").alias("matches"))
        .cast({**POD_LINK, "matches": pl.Int64})
    )


def _placed(pods: pl.DataFrame, attempts: pl.DataFrame, admissions: pl.DataFrame) -> pl.DataFrame:
    """Each pod with its attempt (`attempt`, `start`, `end`): the one in which it was bound, or
    never bound, first seen (a pod seen before the first admission, a gated one, is of the
    first); and its admission (`admitted_at`, `expected`)."""
    timed = pods.with_columns(pl.coalesce("bind_at", "first_at").alias("t")).filter(
        pl.col("t").is_not_null()
    )
    after = latest_before(timed, attempts, ("t", "start"))
    first = attempts.sort("start").group_by("wid").first()
    columns = [c for c in attempts.columns if c != "wid"]
    before = after.filter(pl.col("attempt").is_null()).drop(columns).join(first, on="wid")
    placed = pl.concat(
        [after.filter(pl.col("attempt").is_not_null()), before], how="vertical_relaxed"
    )
    return latest_before(placed, admissions, ("start", "admitted_at"))


def holds(
    facts: pl.DataFrame,
    links: pl.DataFrame,
    podsets: pl.DataFrame,
    attempts: pl.DataFrame,
    admissions: pl.DataFrame,
    releases: pl.DataFrame,
    jobs: pl.DataFrame,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The pods' holds (HOLD, task indices from `tasks` up) in the admissions whose pods the
    input shows, and those admissions (`wid`, `admitted_at`).

    `podsets`: every pod set (`wid`, `name`, `per_pod`: null for one without accelerators);
    `attempts`: the fold's segments (`wid`, `attempt`, `start`, `end`); `admissions`: `wid`,
    `admitted_at` and `expected`, the accelerator pods it admitted; `releases`: the fold's
    (`wid`, `at`, `cause`); `jobs`: `wid`, `job_end` (null: open) and `tasks`.

    An attempt's pods are shown when the input knows at least as many accelerator pods in it
    as its admission admitted, with each one's chips and binding time; an admission's pods
    decide when all of its attempts' are shown. A pod whose end is not known holds until its
    attempt ends (an eviction, a JobSet restart; or the job's end, or the data's)."""
    sizes = (
        podsets.filter(pl.col("per_pod").is_not_null())
        .group_by("wid")
        .agg(pl.col("per_pod").unique().alias("sizes"))
    )
    pods = (
        facts.drop("podset")
        .join(links.filter(pl.col("matches") == 1), on="key")
        .join(
            podsets.select("wid", pl.col("name").alias("podset"), "per_pod"),
            on=["wid", "podset"],
            how="left",
        )
        .join(sizes, on="wid", how="left")
        .with_columns(
            # A pod known only from events asks for what its pod set's pods ask for; one whose
            # pod set is not known, for the Workload's only size of accelerator pod.
            pl.when(pl.col("has_object"))
            .then("chips")
            .when(pl.col("podset").is_not_null())
            .then(pl.col("per_pod").fill_null(0))
            .when(pl.col("sizes").list.len() == 1)
            .then(pl.col("sizes").list.first())
            .alias("chips")
        )
    )
    attempts = attempts.with_columns(
        (pl.col("attempt") == pl.col("attempt").max().over("wid")).alias("last")
    )
    placed = _placed(pods, attempts, admissions)
    accelerated = pl.col("chips").is_null() | (pl.col("chips") > 0)
    unknown = pl.col("chips").is_null() | (pl.col("bound") & pl.col("bind_at").is_null())
    shown = placed.group_by("wid", "attempt").agg(
        accelerated.sum().alias("known"), unknown.any().alias("unknown")
    )
    per_attempt = latest_before(attempts, admissions, ("start", "admitted_at")).join(
        shown, on=["wid", "attempt"], how="left"
    )
    whole = (pl.col("known").fill_null(0) >= pl.col("expected")) & ~pl.col("unknown").fill_null(
        False
    )
    decided = (
        per_attempt.group_by("wid", "admitted_at")
        .agg(whole.all().alias("whole"))
        .filter(pl.col("whole"))
        .select("wid", "admitted_at")
    )
    held = (
        placed.join(decided, on=["wid", "admitted_at"])
        .filter(pl.col("bound") & (pl.col("chips") > 0))
        .join(jobs, on="wid")
        .filter(pl.col("job_end").is_null() | (pl.col("bind_at") < pl.col("job_end")))
        .join(releases.rename({"at": "end"}), on=["wid", "end"], how="left")
    )
    own = pl.col("pod_end").is_not_null()
    # Released at the pod's own end; else at its attempt's, where a later attempt follows (an
    # eviction or a JobSet restart): the last attempt ends with the job, or runs on.
    until = pl.when(own).then("pod_end").when(~pl.col("last")).then("end")
    cause = (
        pl.when(own)
        .then("release")
        .when(pl.col("cause") == NODE_FAILURES)
        .then(pl.lit(LOST))
        .otherwise(pl.lit(EVICT))
    )
    before_end = pl.col("job_end").is_null() | (pl.col("until") < pl.col("job_end"))
    held = held.with_columns(until.alias("until"), cause.alias("cause")).filter(
        pl.col("until").is_null() | (pl.col("until") > pl.col("bind_at"))
    )
    return (
        held.sort("wid", "bind_at", "key")
        .select(
            "wid",
            (pl.col("tasks") + pl.int_range(pl.len()).over("wid")).alias("task_index"),
            "chips",
            pl.col("bind_at").alias("start"),
            pl.when(before_end).then("until").alias("end"),
            pl.when(before_end & pl.col("until").is_not_null()).then("cause").alias("release"),
        )
        .cast(HOLD),
        decided,
    )
