"""A Kueue Workload's history, put together from its conditions and the events about it and its
JobSet, and folded into allocations and attempts, all as Polars columns
(docs/adapters/kubernetes.md says why each rule is what it is).

A Workload keeps only the latest transition of each condition type; events carry the earlier ones
but expire (an hour by default) and are aggregated when they repeat. So:
- every event occurrence whose time is known is a transition (an event of count N knows its first
  and last occurrence: N > 2 leaves some unknown, and so do versions an exporter did not see);
- a condition is a transition too, and where an event of the same kind lies from 1 s before to
  5 s after it, they are one transition at the condition's time (written in the same update that
  made the change; the event is emitted after it, asynchronously);
- the folded sequence must be consistent, or the Workload's history is incomplete and it is
  quarantined rather than accounted wrongly: two admissions with no eviction between, an eviction
  before any admission, fewer evictions than `status.schedulingStats` counts, a JobSet restart
  with no time.
"""

from __future__ import annotations

import polars as pl

from mpg.adapters.canonical import UTC_TIME

ADMIT, EVICT, RESTART = "admit", "evict", "restart"
# At one instant a release comes before a schedule (the spec's rule), a restart last.
RANK = {EVICT: 0, ADMIT: 1, RESTART: 2}
EVICTED_DUE_TO = "EvictedDueTo"  # Kueue >= 0.10: EvictedDueTo<condition reason>
PREEMPTED = "Preempted"  # the preemptor's event on its target (the only one before Kueue 0.10)
RESTART_REASONS = (
    "RestartJobSetFailurePolicyAction",  # JobSet >= 0.6
    "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction",
    "Restarting",  # JobSet < 0.6
)
NODE_FAILURES = "NodeFailures"
# Evicted reasons of a deactivation (spec.active false): Kueue >= 0.10 writes Deactivated[...],
# 0.6 to 0.9 InactiveWorkload[<DeactivationTarget reason>] (WorkloadEvictedByDeactivation).
DEACTIVATED = ("Deactivated", "InactiveWorkload")
MATCH_BEFORE, MATCH_AFTER = pl.duration(seconds=1), pl.duration(seconds=5)

TRANSITION = {
    "wid": pl.Int64,
    "at": UTC_TIME,
    "kind": pl.String,
    "cause": pl.String,
    "source": pl.Int64,
}
PROBLEM = {"wid": pl.Int64, "problem": pl.String}


def deactivation(column: str) -> pl.Expr:
    """Whether an Evicted reason (`column`) is a deactivation's."""
    reason = pl.col(column).fill_null("")
    return pl.any_horizontal(*(reason.str.starts_with(p) for p in DEACTIVATED))


def parse_time(column: str) -> pl.Expr:
    """RFC 3339 text (`Z` or an offset, any fraction) as a UTC instant; null if unreadable."""
    return pl.col(column).str.strptime(UTC_TIME, "%Y-%m-%dT%H:%M:%S%.f%#z", strict=False)


def latest_before(
    left: pl.DataFrame, right: pl.DataFrame, on: tuple[str, str], *, exact: bool = True
) -> pl.DataFrame:
    """Each row of `left` with the row of `right` of the same Workload (`wid`) whose time
    (`on[1]`) is the latest at or before its own (`on[0]`; strictly before where not `exact`);
    nulls where there is none."""
    return left.sort(on[0]).join_asof(
        right.sort(on[1]),
        left_on=on[0],
        right_on=on[1],
        by="wid",
        strategy="backward",
        allow_exact_matches=exact,
        check_sortedness=False,
    )


def occurrences(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each event's known occurrences (`rid`, `identity`, `at`), merged over the versions of one
    event (an exporter writes it again as its count grows); and the identities where some
    occurrence has no time (`identity`, `problem`)."""
    first = events.select("rid", "identity", pl.lit(1, pl.Int64).alias("index"), "first_at")
    last = events.filter(pl.col("count") > 1).select(
        "rid", "identity", pl.col("count").alias("index"), pl.col("last_at").alias("first_at")
    )
    known = (
        pl.concat([first, last])
        .filter(pl.col("first_at").is_not_null())
        .unique(["identity", "index"], keep="first", maintain_order=True)
        .rename({"first_at": "at"})
    )
    counted = (
        events.filter(transition_kind().is_not_null())
        .group_by("identity")
        .agg(pl.col("count").max().alias("n"), pl.col("reason").first())
    )
    seen = known.group_by("identity").agg(pl.len().alias("seen"))
    missing = (
        counted.join(seen, on="identity", how="left")
        .filter(pl.col("seen").fill_null(0) < pl.col("n"))
        .select(
            "identity",
            pl.format(
                "history incomplete: an event counts {} occurrences of {}, {} with a time",
                "n",
                "reason",
                pl.col("seen").fill_null(0),
            ).alias("problem"),
        )
    )
    return known.select("rid", "identity", "at"), missing


def transition_kind() -> pl.Expr:
    """What an event (`reason`, `about_kind`) does to its Workload: admits it, evicts it, or
    restarts its JobSet; null for an event that changes no allocation (Pending, QuotaReserved,
    Started, Stopped, FinishedWorkload, ...)."""
    reason, about = pl.col("reason"), pl.col("about_kind")
    workload = about == "Workload"
    return (
        pl.when(workload & (reason == "Admitted"))
        .then(pl.lit(ADMIT))
        .when(workload & (reason.str.starts_with(EVICTED_DUE_TO) | (reason == PREEMPTED)))
        .then(pl.lit(EVICT))
        .when((about == "JobSet") & reason.is_in(RESTART_REASONS))
        .then(pl.lit(RESTART))
    )


def event_transitions(linked: pl.DataFrame, known: pl.DataFrame) -> pl.DataFrame:
    """Transitions of the events linked to a Workload (`wid`): admitted, evicted (`cause` the
    condition's reason), or the owner JobSet restarted."""
    reason = pl.col("reason")
    kind = transition_kind()
    cause = (
        pl.when(reason == PREEMPTED)
        .then(pl.lit(PREEMPTED))
        .otherwise(reason.str.strip_prefix(EVICTED_DUE_TO))
    )
    typed = linked.with_columns(kind.alias("kind"), cause.alias("cause"))
    return (
        typed.filter(pl.col("kind").is_not_null())
        .join(known.select("rid", "at"), on="rid")
        .select("wid", "at", "kind", "cause", pl.col("rid").alias("source"))
        .cast(TRANSITION)
    )


def condition_transitions(conditions: pl.DataFrame) -> pl.DataFrame:
    """`Admitted` and `Evicted` conditions that are True, as transitions (one per distinct
    transition over all snapshots of a Workload)."""
    true = conditions.filter(pl.col("status") == "True")
    kind = (
        pl.when(pl.col("type") == "Admitted")
        .then(pl.lit(ADMIT))
        .when(pl.col("type") == "Evicted")
        .then(pl.lit(EVICT))
    )
    return (
        true.with_columns(kind.alias("kind"))
        .filter(pl.col("kind").is_not_null() & pl.col("at_time").is_not_null())
        .select(
            "wid",
            pl.col("at_time").alias("at"),
            "kind",
            pl.when(pl.col("kind") == EVICT).then(pl.col("reason")).alias("cause"),
            pl.lit(None, pl.Int64).alias("source"),
        )
        .unique(["wid", "at", "kind", "cause"], maintain_order=True)
    )


def merged(from_conditions: pl.DataFrame, from_events: pl.DataFrame) -> pl.DataFrame:
    """Both sources as one list of transitions: an event that is a condition's own transition
    (same kind, from 1 s before to 5 s after it) is dropped; the condition's time is kept."""
    pairs = from_events.with_row_index("e").join(
        from_conditions.select("wid", "kind", pl.col("at").alias("c_at")), on=["wid", "kind"]
    )
    same = pairs.filter(
        pl.col("at").is_between(pl.col("c_at") - MATCH_BEFORE, pl.col("c_at") + MATCH_AFTER)
    )
    kept = from_events.with_row_index("e").join(same.select("e"), on="e", how="anti").drop("e")
    return pl.concat([from_conditions, kept]).cast(TRANSITION)


def restart_transitions(
    restarts: pl.DataFrame, jobsets: pl.DataFrame, children: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """JobSet restarts per Workload, numbered 1..N: N is the most of the JobSet's
    `status.restarts`, the highest `restart-attempt` label of its Jobs and Pods, and the restart
    events. Events expire oldest first, so the M events are restarts N-M+1..N; a restart with
    no event starts when the first Job or Pod labelled with its number was created (later than
    the decision, which the event marks). A restart with neither has no time, and one whose
    event comes after its Jobs, or before the restart it follows, contradicts the numbering
    (an exporter missed a newer event): both are problems, never a guess."""
    numbered = restarts.sort("wid", "at").with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("wid").alias("rank"),
        pl.len().over("wid").cast(pl.Int64).alias("m"),
    )
    labelled = (
        children.filter(pl.col("attempt") >= 1)
        .group_by("wid", "attempt")
        .agg(pl.col("created_at").min())
    )
    total = (
        pl.concat(
            [
                numbered.select("wid", pl.col("m").alias("n")),
                jobsets.select("wid", pl.col("restarts").alias("n")),
                labelled.select("wid", pl.col("attempt").alias("n")),
            ]
        )
        .group_by("wid")
        .agg(pl.col("n").max())
    )
    from_events = numbered.join(total, on="wid").select(
        "wid", (pl.col("n") - pl.col("m") + pl.col("rank")).alias("attempt"), "at", "source"
    )
    wanted = (
        total.with_columns(pl.int_ranges(1, pl.col("n") + 1).alias("attempt"))
        .explode("attempt")
        .filter(pl.col("attempt").is_not_null())
        .select("wid", "attempt")
    )
    timed = (
        wanted.join(from_events, on=["wid", "attempt"], how="left")
        .join(labelled, on=["wid", "attempt"], how="left")
        .with_columns(pl.coalesce("at", "created_at").alias("at"))
        .sort("wid", "attempt")
    )
    # A restart comes before the Jobs it creates, and after the restart before it.
    disorder = (pl.col("at") > pl.col("created_at")) | (
        pl.col("at") <= pl.col("at").shift(1).over("wid")
    )
    problems = pl.concat(
        [
            timed.filter(pl.col("at").is_null()).select(
                "wid",
                pl.format(
                    "history incomplete: JobSet restart {} has no time (no event, no labelled Job)",
                    "attempt",
                ).alias("problem"),
            ),
            timed.filter(disorder).select(
                "wid",
                pl.lit(
                    "history incomplete: restart events and restart-attempt labels disagree"
                ).alias("problem"),
            ),
        ]
    )
    transitions = timed.filter(pl.col("at").is_not_null()).select(
        "wid", "at", pl.lit(RESTART).alias("kind"), pl.lit(None, pl.String).alias("cause"), "source"
    )
    return transitions.cast(TRANSITION), problems


def fold(transitions: pl.DataFrame, jobs: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The Workloads' allocations and attempts from their transitions. `jobs` has `wid`,
    `created_at`, `end_at` (null: still open), `stop_at` (where an open job's last attempt
    ends: the end of the data) and `evictions` (`status.schedulingStats`, or null).

    Returns `admissions` (`wid`, `at`, `latest`), `releases` (`wid`, `at`, `cause`),
    `segments` (`wid`, `attempt`, `start`, `end`) and `problems` (`wid`, `problem`)."""
    steps = (
        transitions.join(jobs.select("wid", "created_at", "end_at"), on="wid")
        .with_columns(pl.max_horizontal("at", "created_at").alias("at"))
        .filter(pl.col("end_at").is_null() | (pl.col("at") < pl.col("end_at")))
        .with_columns(pl.col("kind").replace_strict(RANK, return_dtype=pl.Int64).alias("rank"))
        .sort("wid", "at", "rank")
    )
    kind = pl.col("kind")
    holding = (
        pl.when(kind == ADMIT)
        .then(True)
        .when(kind == EVICT)
        .then(False)
        .otherwise(None)
        .forward_fill()
        .over("wid")
    )
    steps = steps.with_columns(holding.fill_null(False).alias("after")).with_columns(
        pl.col("after").shift(1).over("wid").fill_null(False).alias("before"),
        (kind == ADMIT).cast(pl.Int64).cum_sum().over("wid").alias("admits"),
    )
    before = pl.col("before")
    opens = ((kind == ADMIT) & ~before) | ((kind == RESTART) & before)
    closes = ((kind == EVICT) & before) | ((kind == RESTART) & before)
    steps = steps.with_columns(opens.alias("opens"), closes.alias("closes"))
    admissions = steps.filter((kind == ADMIT) & ~before).with_columns(
        (pl.col("at") == pl.col("at").max().over("wid")).alias("latest")
    )
    releases = steps.filter((kind == EVICT) & before)
    deactivated = deactivation("cause")
    counted = releases.filter(~deactivated).group_by("wid").agg(pl.len().alias("seen"))
    stats = jobs.join(counted, on="wid", how="left").filter(
        pl.col("evictions") > pl.col("seen").fill_null(0)
    )
    problems = pl.concat(
        [
            steps.filter((kind == ADMIT) & before).select(
                "wid",
                pl.lit("history incomplete: admitted again with no eviction between").alias(
                    "problem"
                ),
            ),
            steps.filter((kind == EVICT) & (pl.col("admits") == 0) & ~deactivated).select(
                "wid",
                pl.lit("history incomplete: evicted before any admission the input shows").alias(
                    "problem"
                ),
            ),
            stats.select(
                "wid",
                pl.format(
                    "history incomplete: status.schedulingStats counts {} evictions, "
                    "the input shows {}",
                    "evictions",
                    pl.col("seen").fill_null(0),
                ).alias("problem"),
            ),
        ]
    )
    ends = jobs.select(
        "wid",
        pl.coalesce("end_at", "stop_at").alias("at"),
        pl.lit(False).alias("opens"),
        pl.lit(True).alias("closes"),
    )
    bounds = (
        pl.concat([steps.filter(pl.col("opens") | pl.col("closes")).select(ends.columns), ends])
        .with_row_index("order")
        .sort("wid", "at", "order")
    )
    segments = (
        bounds.with_columns(
            pl.col("at").shift(-1).over("wid").alias("end"),
            (pl.col("opens").cast(pl.Int64).cum_sum().over("wid") - 1).alias("attempt"),
        )
        .filter(pl.col("opens"))
        .select("wid", "attempt", pl.col("at").alias("start"), "end")
    )
    return {
        "admissions": admissions.select("wid", "at", "latest"),
        "releases": releases.select("wid", "at", "cause"),
        "segments": segments,
        "problems": problems.cast(PROBLEM),
    }
