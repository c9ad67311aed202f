"""`mpg import ml-goodput`: Google's Goodput Measurement API records (PyPI
`ml-goodput-measurement`) and Orbax's checkpoint logger records, as runtime spans.

The recorder logs one JSON payload per event, each naming its `job_name`: `job_start_time` and
`job_end_time`, `step_count` + `step_start_time`, start/end pairs of `tpu_init_*`,
`training_prep_*`, `data_loading_*` and `custom_badput_event_*` (with a type), all epoch seconds.
Orbax's logger writes into the same log one record per checkpoint save or restore (`event_type`,
`step`, `checkpoint_manager_blocking_start_time` + `_duration_secs` for a save,
`checkpoint_manager_start_time` + `checkpoint_manager_duration_secs` for a restore). A line may
also be a Cloud Logging export entry, whose `jsonPayload` is the record, and a file may be one
JSON array of them (`gcloud logging read --format=json`).

How they become spans (docs/adapters/ml-goodput.md has the reasons and worked examples):
- Attempts: every `job_start_time` starts one (a process start), and so does a step whose count
  does not exceed the previous step's within an attempt (a restart that logged no start).
- `tpu_init` -> `init`, `training_prep` -> `compile`, `data_loading` -> `data_wait`, Orbax save
  and restore -> `checkpoint_save` / `checkpoint_restore` (Orbax's blocking time).
- A step runs from its start to the next step's start in its attempt; the last step of an attempt
  to the attempt's last evidence (its latest record, or `job_end_time`). Step time under init,
  compile, checkpoint or custom badput intervals is cut out, so those count as what they are
  rather than as the step the spec's precedence would rank above them. Data loading inside a
  step stays step time: it is the step's own input, which the recorder calls asynchronous.
- Custom badput events (evaluation, SDC checks) have no span kind in the spec: their time is
  covered by no span and lands in `runtime_idle`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from mpg.adapters.arguments import job_options
from mpg.adapters.canonical import Batch, Conversion
from mpg.adapters.jobs import JOB_EXTENT_SCHEMA, synthesized_scheduler
from mpg.adapters.ml_goodput_read import PAIRS, read_events

# Kinds whose time a step does not own: step spans are cut around them.
_CUT_KINDS = ("init", "compile", "checkpoint_save", "checkpoint_restore", "custom")

_STEP_KEY = ("job_id", "attempt", "step")
_SAME_RECORD = ("job_id", "event", "custom_type", "t", "t_end", "step")


def _with_attempts(events: pl.DataFrame) -> pl.DataFrame:
    """Each event's attempt: a `job_start_time` starts one, and so does a step whose count does
    not exceed the step before it since the last start (a restart that logged no start)."""
    rank = pl.when(pl.col("event") == "job_start").then(0).otherwise(1)
    ordered = events.sort("job_id", "t", rank, "file", "line")
    started = (pl.col("event") == "job_start").cum_sum().over("job_id")
    ordered = ordered.with_columns(_started=started)
    is_step = pl.col("event") == "step"
    previous = pl.when(is_step).then(pl.col("step")).forward_fill().shift(1)
    regressed = is_step & (pl.col("step") <= previous.over("job_id", "_started"))
    boundary = (pl.col("event") == "job_start") | regressed.fill_null(False)
    attempt = (boundary.cast(pl.Int64).cum_sum().over("job_id") - 1).clip(lower_bound=0)
    return ordered.with_columns(attempt=attempt).drop("_started")


def _pairs(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Start/end records paired into intervals (job_id, attempt, kind, start, end), and the
    quarantine rows of those with no partner: a start followed by its end pairs, in time order
    per job (and custom event type)."""
    kind = pl.col("event").str.extract(r"^(\w+)_(?:start|end)$")
    paired = [f"{k}_{end}" for k in PAIRS for end in ("start", "end")]
    marked = events.filter(pl.col("event").is_in(paired)).with_columns(
        kind=kind, is_start=pl.col("event").str.ends_with("_start")
    )
    group = ("job_id", "kind", "custom_type")
    marked = marked.sort(*group, "t", "file", "line", nulls_last=True)
    opens = pl.col("is_start") & ~pl.col("is_start").shift(-1).over(group).fill_null(True)
    closes = ~pl.col("is_start") & pl.col("is_start").shift(1).over(group).fill_null(False)
    marked = marked.with_columns(
        _opens=opens, _closes=closes, _end=pl.col("t").shift(-1).over(group)
    )
    intervals = marked.filter("_opens").select(
        "job_id", "attempt", "kind", pl.col("t").alias("start"), pl.col("_end").alias("end")
    )
    lonely = marked.filter(~pl.col("_opens") & ~pl.col("_closes")).select(
        "file",
        "line",
        pl.when("is_start")
        .then(pl.col("event") + " without its end")
        .otherwise(pl.col("event") + " without its start")
        .alias("reason"),
        "raw",
    )
    return intervals, lonely


def _step_intervals(events: pl.DataFrame) -> pl.DataFrame:
    """Each step from its start to the next step's start in its attempt; the last step of an
    attempt to the attempt's last evidence (its latest record, `job_end_time` included)."""
    evidence = events.group_by("job_id", "attempt").agg(pl.col("t_end").max().alias("_last"))
    steps = events.filter(pl.col("event") == "step").sort("job_id", "attempt", "t", "line")
    steps = steps.join(evidence, on=["job_id", "attempt"], how="left")
    following = pl.col("t").shift(-1).over("job_id", "attempt")
    return steps.select(
        "job_id",
        "attempt",
        "step",
        pl.col("t").alias("start"),
        following.fill_null(pl.col("_last")).alias("end"),
        following.is_not_null().alias("timed"),  # ended by the next step's start
    )


def _startup(steps: pl.DataFrame, own: pl.DataFrame, custom: pl.DataFrame) -> pl.DataFrame:
    """The compilation hidden in each attempt's first step: (job_id, attempt, step, excess).

    A jitted program compiles during its first step, and the recorder logs no span for it. Like
    the package's calculator (its PROGRAM_STARTUP), the first step's excess over the mean of the
    attempt's other timed steps counts as compilation, the others' durations taken as the
    calculator takes them (less the custom badput events wholly inside them); an attempt with no
    other timed step has none. The first step's own time (`own`: less every interval cut out of
    it) is what is compared: a checkpoint save inside it (a restarted loop saving the step it
    restored) is the save's time, not compilation.
    """
    inside = (
        custom.sort("start")
        .join_asof(
            steps.sort("start").select(
                "job_id", "attempt", "step", pl.col("start").alias("s"), pl.col("end").alias("e")
            ),
            left_on="start",
            right_on="s",
            by="job_id",
            check_sortedness=False,
        )
        .filter(pl.col("end") <= pl.col("e"))
        .group_by("job_id", "attempt", "step")
        .agg((pl.col("end") - pl.col("start")).sum().alias("_custom"))
    )
    timed = (
        steps.join(inside, on=["job_id", "attempt", "step"], how="left")
        .with_columns(_d=pl.col("end") - pl.col("start") - pl.col("_custom").fill_null(0))
        .sort("job_id", "attempt", "start")
    )
    first = pl.col("start").rank("ordinal").over("job_id", "attempt") == 1
    per_attempt = timed.group_by("job_id", "attempt").agg(
        pl.col("step").filter(first & pl.col("timed")).first(),
        pl.col("_d").filter(~first & pl.col("timed")).mean().alias("_mean"),
    )
    own_time = (
        own.join(per_attempt, on=list(_STEP_KEY))
        .group_by(*_STEP_KEY, "_mean")
        .agg((pl.col("end") - pl.col("start")).sum().alias("_own"))
    )
    excess = (pl.col("_own") - pl.col("_mean")).round().cast(pl.Int64).alias("excess")
    return own_time.select(*_STEP_KEY, excess).filter(pl.col("excess") > 0)


def _carve(own: pl.DataFrame, startup: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`compile` intervals of the first `excess` of each first step's own time, and the steps'
    own time less them: the compile spans overlap nothing cut out of the step."""
    key = list(_STEP_KEY)
    before = pl.col("_len").cum_sum().over(*_STEP_KEY) - pl.col("_len")
    carved = (
        own.join(startup, on=key)  # first steps only: a window per step is slow with millions
        .sort(*_STEP_KEY, "start")
        .with_columns(_len=pl.col("end") - pl.col("start"))
        .with_columns(_cut=pl.col("start") + (pl.col("excess") - before).clip(0, pl.col("_len")))
    )
    startup_spans = carved.filter(pl.col("_cut") > pl.col("start")).select(
        "job_id", "attempt", pl.lit("compile").alias("kind"), "start", pl.col("_cut").alias("end")
    )
    rest = carved.filter(pl.col("_cut") < pl.col("end")).select(
        *_STEP_KEY, pl.col("_cut").alias("start"), "end"
    )
    return startup_spans, pl.concat([own.join(startup, on=key, how="anti"), rest])


def _cut(steps: pl.DataFrame, cuts: pl.DataFrame) -> pl.DataFrame:
    """Step intervals less the union of `cuts` (per job), as pieces of the same step.

    Vectorised as a sweep: the job's time line is split at every interval's bounds; a piece is
    kept where a step covers it and no cut does, and consecutive kept pieces of a step merge.
    """
    bounds = pl.concat(
        [
            frame.select("job_id", pl.col(c).alias("a"))
            for frame in (steps, cuts)
            for c in ("start", "end")
        ]
    ).unique()
    pieces = (
        bounds.sort("job_id", "a")
        .with_columns(b=pl.col("a").shift(-1).over("job_id"))
        .drop_nulls("b")
        .sort("a")
    )
    depth = (
        pl.concat(
            [
                cuts.select("job_id", pl.col("start").alias("t"), pl.lit(1).alias("d")),
                cuts.select("job_id", pl.col("end").alias("t"), pl.lit(-1).alias("d")),
            ]
        )
        .group_by("job_id", "t")
        .agg(pl.col("d").sum())
        .sort("job_id", "t")
        .with_columns(depth=pl.col("d").cum_sum().over("job_id"))
        .sort("t")
    )
    pieces = pieces.join_asof(
        depth.select("job_id", "t", "depth"),
        left_on="a",
        right_on="t",
        by="job_id",
        check_sortedness=False,  # sorted by time: Polars cannot check that within groups
    ).join_asof(
        steps.sort("start"), left_on="a", right_on="start", by="job_id", check_sortedness=False
    )
    kept = pieces.filter(
        pl.col("depth").fill_null(0) == 0, pl.col("step").is_not_null(), pl.col("a") < pl.col("end")
    ).sort("job_id", "attempt", "step", "a")
    # A piece continues the row before it when it is the same step's and starts at its end
    # (whole-frame shifts: a window per step is slow with millions of steps).
    same_step = pl.all_horizontal(pl.col(c) == pl.col(c).shift(1) for c in _STEP_KEY)
    new_piece = ~(same_step & (pl.col("a") == pl.col("b").shift(1))).fill_null(False)
    return (
        kept.with_columns(_piece=new_piece.cum_sum())
        .group_by(*_STEP_KEY, "_piece")
        .agg(pl.col("a").min().alias("start"), pl.col("b").max().alias("end"))
        .drop("_piece")
    )


def _datetime(column: str) -> pl.Expr:
    return pl.from_epoch(pl.col(column), time_unit="us").dt.replace_time_zone("UTC")


def _runtime(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """All of the jobs' runtime spans, and the quarantine rows of unpaired records."""
    intervals, lonely = _pairs(events)
    checkpoints = events.filter(pl.col("event").is_in(["save", "restore"])).select(
        "job_id",
        "attempt",
        pl.when(pl.col("event") == "save")
        .then(pl.lit("checkpoint_save"))
        .otherwise(pl.lit("checkpoint_restore"))
        .alias("kind"),
        pl.col("t").alias("start"),
        pl.col("t_end").alias("end"),
        "step",
    )
    steps = _step_intervals(events)
    cuts = pl.concat(
        [
            intervals.filter(pl.col("kind").is_in(_CUT_KINDS)).select("job_id", "start", "end"),
            checkpoints.select("job_id", "start", "end"),
        ]
    )
    own = _cut(steps.drop("timed"), cuts)
    startup = _startup(steps, own, intervals.filter(pl.col("kind") == "custom"))
    startup_spans, own = _carve(own, startup)
    intervals = pl.concat([intervals, startup_spans])
    steps = own.with_columns(kind=pl.lit("step"))
    spans = pl.concat(
        [intervals.filter(pl.col("kind") != "custom"), checkpoints, steps], how="diagonal"
    )
    spans = spans.select(
        "job_id",
        "attempt",
        "kind",
        _datetime("start").alias("start"),
        _datetime("end").alias("end"),
        "step",
    ).sort("job_id", "start", "kind", "end")
    return spans, lonely


def _extents(events: pl.DataFrame) -> pl.DataFrame:
    """Per job: from its first `job_start_time` (else its first record) to its last
    `job_end_time`, FINISHED when it has one and open (no JOB_END) when not."""
    starts = pl.col("t").filter(pl.col("event") == "job_start")
    ends = pl.col("t").filter(pl.col("event") == "job_end")
    return (
        events.group_by("job_id")
        .agg(
            pl.coalesce(starts.min(), pl.col("t").min()).alias("first"),
            ends.max().alias("last"),
        )
        .select(
            "job_id",
            _datetime("first").alias("first"),
            _datetime("last").alias("last"),
            pl.when(pl.col("last").is_not_null()).then(pl.lit("FINISHED")).alias("state"),
        )
        .cast(JOB_EXTENT_SCHEMA)
    )


def convert(paths: list[Path], args: argparse.Namespace) -> Conversion:
    opts = job_options(args, writes_profiles=False)
    read, events, quarantine = read_events(paths, args.job_id)
    # A log delivered twice (a retried write, overlapping exports) repeats records exactly: each
    # counts once, or a repeated step would read as a restart (the calculator counts one).
    events = events.unique(subset=_SAME_RECORD, keep="first", maintain_order=True)
    events = _with_attempts(events)
    spans, lonely = _runtime(events)
    quarantine = pl.concat([quarantine, lonely])
    scheduler = synthesized_scheduler(_extents(events), opts) if opts.synthesize else None
    batches = [
        Batch(
            name=job,
            scheduler=None if scheduler is None else scheduler.filter(pl.col("job_id") == job),
            runtime=spans.filter(pl.col("job_id") == job),
        )
        for job in spans.get_column("job_id").unique().sort()
    ]
    return Conversion(
        read=read, converted=read - quarantine.height, batches=batches, quarantine=quarantine
    )
