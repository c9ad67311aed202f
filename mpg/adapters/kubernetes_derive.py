"""Every Workload's canonical records, derived from all the Kubernetes objects read (this import's
and those earlier imports kept): which records are usable, what each Workload's history is, when
its chips were held, and why a record was quarantined or ignored (docs/adapters/kubernetes.md).
A pure function of the records, so that importing a day after another equals importing both at
once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import polars as pl

from mpg.adapters import kubernetes_history as history
from mpg.adapters import kubernetes_pods as pods
from mpg.adapters.canonical import UTC_TIME
from mpg.adapters.jobs import allocation_spans
from mpg.adapters.kubernetes_events import admitted_pods, earlier_partial, scheduler_events
from mpg.adapters.kubernetes_jobs import jobs, links, readable, snapshots, tasks
from mpg.adapters.kubernetes_read import Objects

if TYPE_CHECKING:
    from mpg.adapters.kubernetes import KubernetesOptions

NOT_CONVERTED = "its Workload was not converted"
SEALED = "records of Workloads an earlier import settled"
UNKNOWN_WORKLOAD = "no Workload in the input for this event"
SEVERAL = "matches several Workloads of one name: give uids"


@dataclass(frozen=True)
class Derived:
    records: pl.DataFrame  # rid, reason (quarantined), ignored (what it is), wid, at
    workloads: pl.DataFrame  # wid, job_id, namespace, name, uid, end_at, problem, allocated_from
    scheduler: pl.DataFrame  # canonical scheduler events of the converted Workloads, with wid
    runtime: pl.DataFrame | None  # their attempt spans, with wid (None: --no-runtime)
    stop: datetime | None  # where a running attempt ends
    earlier_admissions: int  # admissions taken at the spec's count (see _unknown_counts)


def _event_times(objs: Objects) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Readable events with their times parsed (`first_at`, `last_at`), and the records whose
    times cannot be used (`rid`, `problem`): unparseable, or the last before the first (to the
    second: the older recorder writes whole seconds)."""
    events = readable(objs.events, objs).with_columns(
        history.parse_time("first").alias("first_at"),
        history.parse_time("last").alias("last_at"),
    )
    first, last = pl.col("first_at"), pl.col("last_at")
    problem = (
        pl.when(first.is_null())
        .then(pl.lit("unparseable time: eventTime or firstTimestamp"))
        .when(pl.col("last").is_not_null() & last.is_null())
        .then(pl.lit("unparseable time: lastTimestamp or series.lastObservedTime"))
        .when(last < first.dt.truncate("1s"))
        .then(pl.lit("invalid event: its last occurrence is before its first"))
    )
    checked = events.with_columns(problem.alias("problem"))
    bad = checked.filter(pl.col("problem").is_not_null()).select("rid", "problem")
    return checked.filter(pl.col("problem").is_null()).drop("problem"), bad


def _pod_times(objs: Objects) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Readable pods and their conditions (`at_time` parsed), and the pods one of whose times
    cannot be read (`rid`, `problem`)."""
    found = readable(objs.pods, objs)
    conditions = objs.pod_conditions.with_columns(history.parse_time("at").alias("at_time"))
    checks = [
        pl.when(pl.col(c).is_not_null() & history.parse_time(c).is_null()).then(
            pl.lit(f"unparseable time: {field}")
        )
        for c, field in (
            ("created", "metadata.creationTimestamp"),
            ("deleted", "metadata.deletionTimestamp"),
            ("started", "status.startTime"),
            ("finished", "containerStatuses[].state.terminated.finishedAt"),
        )
    ]
    bad_condition = (
        conditions.filter(pl.col("at").is_not_null() & pl.col("at_time").is_null())
        .group_by("rid")
        .agg(pl.format("unparseable time: condition {}", pl.col("type").first()).alias("cond"))
    )
    bad = (
        found.join(bad_condition, on="rid", how="left")
        .select("rid", pl.coalesce(*checks, "cond").alias("problem"))
        .filter(pl.col("problem").is_not_null())
    )
    good = found.join(bad, on="rid", how="anti")
    return good, conditions.join(good.select("rid"), on="rid"), bad


@dataclass(frozen=True)
class _History:
    transitions: pl.DataFrame  # wid, at, kind, cause, source
    problems: pl.DataFrame  # wid, problem: why the Workload's history is incomplete
    unreadable: pl.DataFrame  # rid, problem: records whose own time cannot be read


def _history(
    objs: Objects, events: pl.DataFrame, conditions: pl.DataFrame, linked: pl.DataFrame
) -> _History:
    """Every Workload's transitions: its conditions, its events, its JobSet's restarts."""
    owned = linked.filter(pl.col("wid").is_not_null()).select("rid", "wid")
    events = events.join(owned, on="rid")
    children = (
        readable(objs.children, objs)
        .join(owned, on="rid")
        .with_columns(history.parse_time("created").alias("created_at"))
    )
    unreadable = children.filter(pl.col("created_at").is_null()).select(
        "rid", pl.lit("unparseable time: metadata.creationTimestamp").alias("problem")
    )
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
    return _History(
        transitions=pl.concat([kueue, restarts]),
        problems=pl.concat([incomplete.select("wid", "problem"), restart_problems]),
        unreadable=unreadable,
    )


def _record_times(
    objs: Objects,
    events: pl.DataFrame,
    pods: pl.DataFrame,
    pod_conditions: pl.DataFrame,
    conditions: pl.DataFrame,
) -> pl.DataFrame:
    """The latest time each record states (`rid`, `at`): a Workload's conditions, creation and
    deletion; an event's last occurrence; a pod's creation, start, end and conditions; a
    JobSet's or Job's creation."""
    t = history.parse_time
    return (
        pl.concat(
            [
                readable(objs.workloads, objs).select(
                    "rid", pl.max_horizontal(t("created"), t("deleted")).alias("at")
                ),
                conditions.select("rid", pl.col("at_time").alias("at")),
                events.select("rid", pl.coalesce("last_at", "first_at").alias("at")),
                pods.select(
                    "rid", pl.max_horizontal(t("created"), t("started"), t("finished")).alias("at")
                ),
                pod_conditions.select("rid", pl.col("at_time").alias("at")),
                readable(objs.jobsets, objs).select("rid", t("created").alias("at")),
                readable(objs.jobs, objs).select("rid", t("created").alias("at")),
            ]
        )
        .group_by("rid")
        .agg(pl.col("at").max())
    )


def _owners(
    objs: Objects,
    table: pl.DataFrame,
    linked: pl.DataFrame,
    facts: pl.DataFrame,
    pod_links: pl.DataFrame,
) -> pl.DataFrame:
    """Each Workload's owner (`wid`, `owner`): the --owner-label of the Workload, else of its
    JobSet or Job, else of one of its pods."""
    owned = linked.filter(pl.col("wid").is_not_null()).select("rid", "wid")
    found = pl.concat(
        [
            table.select("wid", pl.col("owner_label"), pl.lit(0).alias("rank")),
            readable(objs.jobsets, objs)
            .join(owned, on="rid")
            .select("wid", "owner_label", pl.lit(1).alias("rank")),
            readable(objs.jobs, objs)
            .join(owned, on="rid")
            .select("wid", "owner_label", pl.lit(1).alias("rank")),
            facts.join(pod_links.filter(pl.col("matches") == 1), on="key").select(
                "wid", "owner_label", pl.lit(2).alias("rank")
            ),
        ]
    ).drop_nulls("owner_label")
    return (
        found.sort("rank", "owner_label")
        .group_by("wid")
        .agg(pl.col("owner_label").first().alias("owner"))
    )


def derive(
    objs: Objects, opts: KubernetesOptions, sealed: pl.DataFrame, stop_before: datetime | None
) -> Derived:
    """Every record's fate and the converted Workloads' records. `sealed`: Workloads
    (`namespace`, `name`, `uid`) an earlier import settled; `stop_before`: the end of the data
    earlier imports saw (a running attempt ends at the latest of it, --as-of and the data)."""
    events, bad_events = _event_times(objs)
    pod_objects, pod_conditions, bad_pods = _pod_times(objs)
    parsed = objs.conditions.with_columns(history.parse_time("at").alias("at_time"))
    every_shot = snapshots(objs, parsed)
    done = every_shot.join(
        sealed,
        left_on=["namespace", "name", pl.col("uid").fill_null("")],
        right_on=["namespace", "name", pl.col("uid").fill_null("")],
        how="semi",
    )
    shots = every_shot.join(done.select("wid"), on="wid", how="anti")
    conditions = parsed.join(shots.select("rid", "wid"), on="rid")
    newest = shots.filter(pl.col("rid") == pl.col("wid"))
    podsets = tasks(objs, newest, opts.accelerators, opts.chip_generation)
    every_podset = objs.podsets.rename({"rid": "wid", "podset": "task_index"}).join(
        newest.select("wid"), on="wid"
    )
    table = jobs(shots, conditions, podsets)
    facts = pods.pod_facts(pod_objects, pod_conditions, events)
    pod_links = pods.link_pods(facts, newest, every_podset)
    linked = links(objs, shots, events, pod_links, every_podset)
    found = _history(objs, events, conditions, linked)
    times = _record_times(objs, events, pod_objects, pod_conditions, parsed)
    owner = pl.concat([shots.select("rid", "wid"), linked.select("rid", "wid").drop_nulls("wid")])
    usable = table.filter(pl.col("problem").is_null()).select("wid")
    latest = times.join(owner, on="rid").join(usable, on="wid").get_column("at").max()
    stop = max((t for t in (opts.as_of or latest, stop_before) if t is not None), default=None)
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
    good = (
        table.join(problems, on="wid", how="anti")
        .join(_owners(objs, table, linked, facts, pod_links), on="wid", how="left")
        .with_columns(pl.col("namespace").alias("team"))
    )
    admissions = admitted_pods(
        folded["admissions"], podsets.join(good.select("wid"), on="wid"), good
    )
    slots = every_podset.group_by("wid").agg(pl.len().cast(pl.Int64).alias("tasks"))
    held, decided = pods.holds(
        facts,
        pod_links,
        every_podset.select("wid", "name", "per_pod"),
        folded["segments"].join(good.select("wid"), on="wid"),
        admissions.select("wid", pl.col("at").alias("admitted_at"), "expected").unique(),
        folded["releases"],
        good.select("wid", pl.col("end_at").alias("job_end")).join(slots, on="wid"),
    )
    scheduler, source = scheduler_events(good, admissions, folded, held, decided, opts)
    runtime = None
    if opts.runtime:
        segments = folded["segments"].join(good.select("wid", "job_id"), on="wid")
        runtime = allocation_spans(segments).with_columns(segments.get_column("wid"))
    records = _fates(
        objs,
        every_shot,
        done,
        linked,
        problems,
        times,
        owner,
        pl.concat([bad_events, bad_pods, found.unreadable]),
        sealed,
    )
    workloads = table.join(problems, on="wid", how="left").join(source, on="wid", how="left")
    return Derived(
        records=records,
        workloads=workloads.select(
            "wid", "job_id", "namespace", "name", "uid", "end_at", "problem", "allocated_from"
        ),
        scheduler=scheduler,
        runtime=runtime,
        stop=stop,
        earlier_admissions=earlier_partial(admissions),
    )


def _fates(
    objs: Objects,
    shots: pl.DataFrame,
    done: pl.DataFrame,
    linked: pl.DataFrame,
    problems: pl.DataFrame,
    times: pl.DataFrame,
    owner: pl.DataFrame,
    unreadable: pl.DataFrame,
    sealed: pl.DataFrame,
) -> pl.DataFrame:
    """Each record (`rid`) with why it is quarantined (`reason`; `intrinsic` where that lies in
    the record itself), or what it is where it is about no Workload's job (`ignored`), its
    Workload (`wid`) and time (`at`)."""
    about_sealed = (
        objs.events.filter(pl.col("about_kind") == "Workload")
        .select("rid", "namespace", pl.col("about_name").alias("name"))
        .join(sealed, on=["namespace", "name"], how="semi")
    )
    frame = (
        objs.records.select("rid", "kind", pl.col("problem").alias("own"))
        .join(unreadable.rename({"problem": "time_problem"}), on="rid", how="left")
        .join(shots.select("rid", pl.col("wid").alias("snapshot_of")), on="rid", how="left")
        .join(
            linked.select("rid", pl.col("wid").alias("linked"), "matches", "about", "about_kind"),
            on="rid",
            how="left",
        )
        .join(owner.unique("rid"), on="rid", how="left")
        .join(problems.rename({"problem": "wid_problem"}), on="wid", how="left")
        .join(times, on="rid", how="left")
        .with_columns(
            pl.col("rid").is_in(done.get_column("rid").implode()).alias("settled"),
            pl.col("rid").is_in(about_sealed.get_column("rid").implode()).alias("late"),
        )
    )
    matches = pl.col("matches").fill_null(0)
    reason = pl.coalesce(
        "own",
        "time_problem",
        pl.when(pl.col("snapshot_of").is_not_null()).then("wid_problem"),
        pl.when(matches > 1).then(pl.lit(SEVERAL)),
        pl.when(pl.col("wid_problem").is_not_null()).then(pl.lit(NOT_CONVERTED)),
        pl.when((matches == 0) & (pl.col("about_kind") == "Workload") & ~pl.col("late")).then(
            pl.lit(UNKNOWN_WORKLOAD)
        ),
    )
    ignored = (
        pl.when(pl.col("settled") | pl.col("late"))
        .then(pl.lit(SEALED))
        .when(pl.col("kind").is_in(["Event", "JobSet", "Job", "Pod"]) & (matches == 0))
        .then("about")
    )
    return frame.select(
        "rid",
        reason.alias("reason"),
        pl.coalesce("own", "time_problem").is_not_null().alias("intrinsic"),
        pl.when(reason.is_null()).then(ignored).alias("ignored"),
        "wid",
        "at",
    )
