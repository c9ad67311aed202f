"""Chip-time accounting for the jobs of one bucket, vectorised with Polars (spec section
"Accounting, metric definition v1").

The whole calculation is one sweep per job over *boundary events*: every instant at which
something starts or stops (the job is submitted or ends, a task gets or returns chips, a span
starts or ends, a UTC day begins) carries a delta for each counter. Cumulative sums give, for
each elementary segment between two consecutive instants, how many chips the job holds and which
span kinds are active; the segment is then charged to exactly one category (scheduling, the first
active span kind in `SPAN_PRECEDENCE`, or runtime_idle), so the ledger adds up to wanted time by
construction. No Python loop runs per event.

Times are integer microseconds since the epoch throughout, so time sums are exact; chip-seconds
are formed only at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import polars as pl
import pyarrow as pa

from mpg.definitions.catalog import ChipCatalog
from mpg.definitions.metrics import LEDGER_CATEGORIES, METRIC_VERSIONS, SPAN_PRECEDENCE
from mpg.definitions.vocabulary import TASK_RELEASES
from mpg.schemas import CHIP_TIME_LEDGER, JOB_DAY_GOODPUT, RECORD_ORDER, conform
from mpg.transforms.chip_time import seconds
from mpg.transforms.ratios import job_day_ratios

DAY_US = 86_400_000_000
_US = pl.Int64
_COUNTERS = ("wanted", "held", *SPAN_PRECEDENCE)


def _us(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Datetime("us", "UTC")).dt.epoch("us").alias(column)


def utc_day(column: str) -> pl.Expr:
    """The UTC day of an epoch-microsecond column: the day a second or a profile is charged to."""
    return (pl.col(column) // DAY_US).cast(pl.Int32).cast(pl.Date).alias("day")


def job_windows(scheduler: pl.DataFrame, data_end_us: int) -> pl.DataFrame:
    """One row per job, in job_id order: `job` (its row number, an integer key that sorts and
    groups faster than the job_id text), its attributes, when it wants chips, and how it ended
    (if it did)."""
    submits = scheduler.filter(pl.col("type") == "JOB_SUBMIT").select(
        "job_id",
        "chips_requested",
        "chip_generation",
        "workload_class",
        "framework",
        "owner",
        "team",
        "queue",
        "allocated_from",
        pl.col("ts").alias("submit_us"),
    )
    ends = scheduler.filter(pl.col("type") == "JOB_END").select(
        "job_id", pl.col("ts").alias("end_us"), pl.col("state").alias("end_state")
    )
    return (
        submits.join(ends, on="job_id", how="left")
        .with_columns(
            pl.max_horizontal("submit_us", pl.col("end_us").fill_null(data_end_us)).alias(
                "wanted_end_us"
            )
        )
        .sort("job_id")
        .with_row_index("job")
    )


def allocation_deltas(scheduler: pl.DataFrame, jobs: pl.DataFrame) -> pl.DataFrame:
    """Chips the job holds, as deltas: per task, a schedule replaces its count, a release zeroes it.

    `JOB_END` releases every task at its instant. At one instant a task's releases apply before its
    schedules (and of two schedules the larger applies last, so the result never depends on file
    order).
    """
    task_events = scheduler.filter(pl.col("type").str.starts_with("TASK_")).select(
        "job_id", "ts", "task_index", "chips", pl.col("type").is_in(TASK_RELEASES).alias("release")
    )
    job_end_releases = (
        task_events.select("job_id", "task_index")
        .unique()
        .join(jobs.filter(pl.col("end_us").is_not_null()), on="job_id")
        .select(
            "job_id",
            pl.col("end_us").alias("ts"),
            "task_index",
            pl.lit(None, pl.Int64).alias("chips"),
            pl.lit(True).alias("release"),
        )
    )
    held = pl.when(pl.col("release")).then(0).otherwise(pl.col("chips"))
    return (
        pl.concat([task_events, job_end_releases])
        .sort(["job_id", "task_index", "ts", pl.col("release").not_(), "chips"], nulls_last=False)
        .with_columns(held.alias("held_after"))
        .select(
            "job_id",
            pl.col("ts").alias("t"),
            (
                pl.col("held_after")
                - pl.col("held_after").shift(1).over(["job_id", "task_index"]).fill_null(0)
            ).alias("held"),
        )
    )


def attempt_windows(runtime: pl.DataFrame, jobs: pl.DataFrame) -> pl.DataFrame:
    """One row per job attempt: when it starts and ends, and its durable checkpoint.

    Attempt `a` ends where the first span of any later attempt starts, else at `JOB_END`
    (`attempt_end` is null for the last attempt of a job that has not ended). `durable_step` is
    the largest step of a checkpoint_save of the attempt that ended no later than the attempt.
    Kept apart from `classify_spans` so that `mpg explain` shows the very windows that decided
    which steps were lost.
    """
    attempts = (
        runtime.group_by("job_id", "attempt")
        .agg(pl.col("start").min().alias("first_start"))
        .sort(["job_id", "attempt"], descending=[False, True])
        .with_columns(
            pl.col("first_start").cum_min().shift(1).over("job_id").alias("next_start"),
            pl.col("attempt").max().over("job_id").alias("last_attempt"),
        )
        .join(jobs.select("job_id", "end_us"), on="job_id")
        .with_columns(pl.coalesce("next_start", "end_us").alias("attempt_end"))
    )
    durable = (
        runtime.filter(pl.col("kind") == "checkpoint_save")
        .join(attempts.select("job_id", "attempt", "attempt_end"), on=["job_id", "attempt"])
        .filter(pl.col("attempt_end").is_null() | (pl.col("end") <= pl.col("attempt_end")))
        .group_by("job_id", "attempt")
        .agg(pl.col("step").max().alias("durable_step"))
    )
    return attempts.join(durable, on=["job_id", "attempt"], how="left")


def keeps_every_step() -> pl.Expr:
    """True where every step of an attempt is kept, whatever its checkpoints.

    Over an attempt joined with its job's `workload_class` and `end_state`: serving and
    bulk-inference steps are always kept, and so are those of a job's last attempt when the job
    FINISHED or has not ended.
    """
    return (pl.col("workload_class") != "training") | (
        (pl.col("attempt") == pl.col("last_attempt"))
        & (pl.col("end_state").is_null() | (pl.col("end_state") == "FINISHED"))
    )


def classify_spans(
    runtime: pl.DataFrame, attempts: pl.DataFrame, jobs: pl.DataFrame
) -> pl.DataFrame:
    """Each span with its job's key (`job`) and its precedence category; steps become kept_step
    or lost_step.

    A training step is kept when a checkpoint_save of its attempt covering its step ended by the
    end of the attempt (`attempt_windows`), or when `keeps_every_step` holds for its attempt.
    """
    kept = keeps_every_step() | (pl.col("step") <= pl.col("durable_step")).fill_null(False)
    # The job's columns go onto its attempts (few rows), then onto the spans in one join.
    per_attempt = attempts.select("job_id", "attempt", "last_attempt", "durable_step").join(
        jobs.select("job_id", "job", "workload_class", "end_state"), on="job_id"
    )
    return runtime.join(per_attempt, on=["job_id", "attempt"]).with_columns(
        pl.when(pl.col("kind") != "step")
        .then(pl.col("kind"))
        .when(kept)
        .then(pl.lit("kept_step"))
        .otherwise(pl.lit("lost_step"))
        .alias("category")
    )


def _boundary_events(
    jobs: pl.DataFrame, allocation: pl.DataFrame, spans: pl.DataFrame
) -> pl.DataFrame:
    """All instants of every job (`key`: its `job`), each with the counter it moves
    (`counter`: an index into _COUNTERS; null at a midnight, which moves none) and by how much
    (`delta`), sorted by job and instant. One narrow row per instant, whichever counter it
    moves: the sort carries four columns, not one per counter."""
    keys = jobs.select("job_id", pl.col("job").alias("key"))

    def events(frame: pl.DataFrame, counter: pl.Expr, delta: pl.Expr) -> pl.DataFrame:
        return frame.select(
            "key", "t", counter.cast(pl.UInt8).alias("counter"), delta.cast(_US).alias("delta")
        )

    first_day = pl.col("submit_us") // DAY_US + 1
    last_day = (pl.col("wanted_end_us") - 1) // DAY_US
    jobs = jobs.rename({"job": "key"})
    midnights = (
        jobs.select("key", pl.int_ranges(first_day, last_day + 1).alias("day"))
        .explode("day")
        .drop_nulls("day")
        .select("key", (pl.col("day") * DAY_US).alias("t"))
    )
    kind = pl.col("category").replace_strict(_COUNTER_OF, default=None, return_dtype=pl.UInt8)
    spans = spans.select(pl.col("job").alias("key"), kind.alias("counter"), "start", "end")
    spans = spans.drop_nulls("counter")
    wanted, held = _COUNTER_OF["wanted"], _COUNTER_OF["held"]
    counted = pl.col("counter")
    return pl.concat(
        [
            events(jobs.select("key", pl.col("submit_us").alias("t")), pl.lit(wanted), pl.lit(1)),
            events(
                jobs.select("key", pl.col("wanted_end_us").alias("t")),
                pl.lit(wanted),
                pl.lit(-1),
            ),
            events(midnights, pl.lit(None), pl.lit(0)),
            events(allocation.join(keys, on="job_id"), pl.lit(held), pl.col("held")),
            events(spans.select("key", "counter", pl.col("start").alias("t")), counted, pl.lit(1)),
            events(spans.select("key", "counter", pl.col("end").alias("t")), counted, pl.lit(-1)),
        ]
    ).pipe(_by_job_and_instant)


def _by_job_and_instant(events: pl.DataFrame) -> pl.DataFrame:
    """`events` sorted by job key, then instant: by one int64 holding both (the key in the high
    bits, the instant's offset from the earliest in the low ones) where they fit in 62 bits, as
    they do unless jobs are spread over more than ~2**62 / keys µs; else by two one-column sorts.
    One sort of one integer column took 60% of the time of the two sorts, which took half that of
    one sort by two columns (0.5M spans). Rows at one instant of one job may come in any order
    (`charge_segments` says why)."""
    if events.is_empty():
        return events
    first, last = events.select(pl.col("t").min().alias("first"), pl.col("t").max()).row(0)
    instant_bits = (last - first).bit_length()
    key_bits = events.select(pl.col("key").max()).item().bit_length()
    if instant_bits + key_bits > 62:
        return events.sort("t").sort("key", maintain_order=True)
    return events.sort(pl.col("key").cast(pl.Int64) * (1 << instant_bits) + (pl.col("t") - first))


# Each counter's index in `_boundary_events`; the categories a segment is charged to, by code.
_COUNTER_OF = {c: i for i, c in enumerate(_COUNTERS)}
_SCHEDULING, _RUNTIME_IDLE = len(_COUNTERS), len(_COUNTERS) + 1
_CATEGORY_OF = {_COUNTER_OF[k]: k for k in SPAN_PRECEDENCE} | {
    _SCHEDULING: "scheduling",
    _RUNTIME_IDLE: "runtime_idle",
}


def charge_segments(
    jobs: pl.DataFrame, allocation: pl.DataFrame, spans: pl.DataFrame
) -> pl.DataFrame:
    """Chip-microseconds per job, UTC day and category (scheduling, runtime_idle or a span kind).

    Over the boundary events sorted by job and instant, each counter's running sum is its value
    during the segment that starts at a row, which lasts until the next row of its job. The
    wanted and span counters return to zero at each job's last row (every +1 has its -1), so
    their running sums over all rows are already each job's own; only the chips held (a job
    without JOB_END may keep them) are counted from the job's first row: the running sum over
    all rows less its value before that row. Rows at one instant make segments of length zero
    but the last, which carries all of that instant's deltas, so no grouping by instant is
    needed (nor any window per job: a sort and running sums do it all). Segments are grouped by
    the job's integer key and a category code; names are joined to the few groups.
    """
    counter, delta = pl.col("counter"), pl.col("delta")

    def moved(name: str) -> pl.Expr:
        return pl.when(counter == _COUNTER_OF[name]).then(delta).otherwise(0)

    first_of_job = (pl.col("key") != pl.col("key").shift(1)).fill_null(True)
    held = moved("held").cum_sum()
    before_job = pl.when(first_of_job).then(held - moved("held")).forward_fill()
    same_job_next = pl.col("key").shift(-1) == pl.col("key")
    state = (
        _boundary_events(jobs, allocation, spans)
        .with_columns(
            *(moved(c).cum_sum().alias(c) for c in ("wanted", *SPAN_PRECEDENCE)),
            (held - before_job).alias("held"),
            pl.when(same_job_next).then(pl.col("t").shift(-1) - pl.col("t")).alias("length_us"),
        )
        .filter((pl.col("wanted") > 0) & (pl.col("length_us") > 0))
    )
    chips = jobs.get_column("chips_requested").gather(state.get_column("key"))
    category = pl.when(pl.col("held") < chips).then(pl.lit(_SCHEDULING, pl.UInt8))
    for kind in SPAN_PRECEDENCE:
        category = category.when(pl.col(kind) > 0).then(pl.lit(_COUNTER_OF[kind], pl.UInt8))
    names = pl.DataFrame(
        {"code": list(_CATEGORY_OF), "category": list(_CATEGORY_OF.values())},
        schema={"code": pl.UInt8, "category": pl.String},
    )
    return (
        state.select(
            "key",
            utc_day("t"),
            category.otherwise(pl.lit(_RUNTIME_IDLE, pl.UInt8)).alias("code"),
            "length_us",
        )
        .group_by("key", "day", "code")
        .agg(pl.col("length_us").sum())
        .join(jobs.select(pl.col("job").alias("key"), "job_id", "chips_requested"), on="key")
        .join(names, on="code")
        # Time sums stay exact integers; chips multiply in float64, which cannot overflow the way
        # int64 would for a very large gang (and is exact up to 2**53 chip-microseconds).
        .select(
            "job_id",
            "day",
            "category",
            (pl.col("length_us").cast(pl.Float64) * pl.col("chips_requested")).alias("chip_us"),
        )
    )


def program_goodput(
    profiles: pl.DataFrame, jobs: pl.DataFrame, catalog: pl.DataFrame, metric_version: str
) -> pl.DataFrame:
    """PG per job-day: sum of ideal step times over sum of measured step times, that day's records.

    Jobs whose generation has no peak in the catalog get no row (their PG is null).
    """
    ideal = METRIC_VERSIONS[metric_version].ideal_step_time()
    return (
        profiles.join(jobs.select("job_id", "chip_generation"), on="job_id")
        .join(catalog, on="chip_generation")
        .filter(pl.col("peak_flops_per_chip").is_not_null())
        .with_columns(utc_day("ts"))
        .group_by("job_id", "day")
        # Floating-point sums depend on their order, and joins do not keep one: summing each
        # group's values in sorted order gives the same bits on every run.
        .agg((ideal.sort().sum() / pl.col("step_time_s").sort().sum()).alias("pg"))
    )


def decompose_goodput(
    charged: pl.DataFrame, pg: pl.DataFrame, jobs: pl.DataFrame, metric_version: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Job-day chip-seconds (and the measured PG) and their chip-time ledger, for one metric
    version. No ratio is formed here: `goodput_tables` takes SG, RG and MPG from the one
    definition every grain uses (`job_day_ratios`)."""
    per_category = charged.pivot(
        on="category", index=["job_id", "day"], values="chip_us", aggregate_function="sum"
    )
    for column in ("scheduling", "runtime_idle", *SPAN_PRECEDENCE):
        if column not in per_category.columns:
            per_category = per_category.with_columns(pl.lit(0.0).alias(column))
    allocated_columns = ("runtime_idle", *SPAN_PRECEDENCE)
    charged_columns = ("scheduling", *allocated_columns)
    micros = {c: pl.col(c).fill_null(0) for c in charged_columns}
    # Chip-microseconds are whole numbers, so their sums are exact (below 2**53) in any order;
    # scaling to seconds only after summing gives the same bits on every run.
    in_seconds = {
        "wanted_chip_s": seconds(pl.sum_horizontal(*charged_columns)),
        "all_allocated_chip_s": seconds(pl.sum_horizontal(*allocated_columns)),
        **{c: seconds(pl.col(c)) for c in charged_columns},
    }
    job_days = (
        per_category.with_columns(**micros)
        .with_columns(**in_seconds)
        .join(pg, on=["job_id", "day"], how="left")
        .join(jobs, on="job_id")
        .with_columns(
            pl.lit(metric_version).alias("metric_version"),
            pl.col("kept_step").alias("productive_chip_s"),
            (pl.col("kept_step") * pl.col("pg")).alias("ideal_chip_s"),
        )
        .sort("day", "job_id")
    )
    ledger = (
        job_days.with_columns(
            pl.col("ideal_chip_s").alias("ideal"),
            (pl.col("productive_chip_s") - pl.col("ideal_chip_s")).alias("program_loss"),
            pl.when(pl.col("pg").is_null())
            .then(pl.col("productive_chip_s"))
            .alias("productive_unprofiled"),
            pl.col("lost_step").alias("lost_progress"),
        )
        .unpivot(
            on=list(LEDGER_CATEGORIES),
            index=["day", "job_id", "metric_version"],
            variable_name="category",
            value_name="chip_s",
        )
        .filter(pl.col("chip_s").is_not_null() & (pl.col("chip_s") != 0))
        .sort("day", "job_id")
    )
    return job_days, ledger


@dataclass(frozen=True)
class ChipTimeSweep:
    """The frames of one accounting, before any metric version: what `mpg explain` reads back.

    Times are epoch microseconds. `jobs` is `job_windows`, `attempts` `attempt_windows`, `spans`
    `classify_spans`, `allocation` `allocation_deltas`, `charged` `charge_segments`; `scheduler`
    and `profiles` are the input records.
    """

    scheduler: pl.DataFrame
    jobs: pl.DataFrame
    attempts: pl.DataFrame
    spans: pl.DataFrame
    allocation: pl.DataFrame
    profiles: pl.DataFrame
    charged: pl.DataFrame

    @cached_property
    def steps(self) -> pl.DataFrame:
        """`step_rows` of the spans: made once for the step statistics and checkpoint advice."""
        return step_rows(self.spans)


def step_rows(spans: pl.DataFrame) -> pl.DataFrame:
    """One row per step of `classify_spans`' step spans, however many ranks report it: job,
    job_id, attempt, step, start (the earliest rank's), end (the latest rank's), ranks (how many
    distinct ranks name it; 0 where none does) and category (kept_step or lost_step: a step's
    spans share it, since it follows from its attempt and step number). In no particular
    order."""
    named = "rank" in spans.columns and spans.get_column("rank").null_count() < spans.height
    # Counting distinct ranks per step was a third of the grouping where no span names one.
    ranks = pl.col("rank").drop_nulls().n_unique() if named else pl.lit(0)
    return (
        spans.filter(pl.col("kind") == "step")
        .group_by("job", "attempt", "step")
        .agg(
            pl.col("job_id").first(),
            pl.col("start").min(),
            pl.col("end").max(),
            ranks.cast(pl.Int64).alias("ranks"),
            pl.col("category").first(),
        )
    )


def sweep_chip_time(
    scheduler: pa.Table,
    runtime: pa.Table,
    profiles: pa.Table,
    data_end_us: int,
    in_job_order: bool = False,
) -> ChipTimeSweep:
    """Charge every chip-microsecond of some jobs' accepted records to a category and day.

    `data_end_us` is the run's end of data (latest accepted scheduler `ts` or span `end`), where
    the wanted time of a job with no `JOB_END` stops. With `in_job_order` the caller says each
    job's records are together and in RECORD_ORDER (as `reconcile_jobs` leaves them, whatever
    order the jobs are in): they are not sorted again.
    """

    def ordered(table: pa.Table, source: str) -> pl.DataFrame:
        # Every figure of a job is computed over its records in RECORD_ORDER, so floating-point
        # sums add up in one order whatever order the records arrive in (a bucket reconciled
        # whole, or some jobs read back from the record store).
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        return frame if in_job_order else frame.sort(RECORD_ORDER[source])

    sched = ordered(scheduler, "scheduler").with_columns(_us("ts"))
    runtime_spans = ordered(runtime, "runtime").with_columns(_us("start"), _us("end"))
    jobs = job_windows(sched, data_end_us)
    attempts = attempt_windows(runtime_spans, jobs)
    spans = classify_spans(runtime_spans, attempts, jobs)
    allocation = allocation_deltas(sched, jobs)
    return ChipTimeSweep(
        scheduler=sched,
        jobs=jobs,
        attempts=attempts,
        spans=spans,
        allocation=allocation,
        profiles=ordered(profiles, "profiles").with_columns(_us("ts")),
        charged=charge_segments(jobs, allocation, spans),
    )


def goodput_tables(
    sweep: ChipTimeSweep, catalog: ChipCatalog, metric_versions: tuple[str, ...]
) -> tuple[pa.Table, pa.Table]:
    """`job_day_goodput` and `chip_time_ledger` rows of a sweep, for each metric version; the
    ratios of the job-days from sql/publish/job_day_goodput.sql (`job_day_ratios`)."""
    chips = pl.from_arrow(catalog.table)
    job_day_parts, ledger_parts = [], []
    for version in metric_versions:
        pg = program_goodput(sweep.profiles, sweep.jobs, chips, version)
        job_days, ledger = decompose_goodput(sweep.charged, pg, sweep.jobs, version)
        job_day_parts.append(job_days)
        ledger_parts.append(ledger)
    return (
        conform(job_day_ratios(pl.concat(job_day_parts).to_arrow()), JOB_DAY_GOODPUT),
        conform(pl.concat(ledger_parts).to_arrow(), CHIP_TIME_LEDGER),
    )


def account_chip_time(
    scheduler: pa.Table,
    runtime: pa.Table,
    profiles: pa.Table,
    catalog: ChipCatalog,
    data_end_us: int,
    metric_versions: tuple[str, ...],
) -> tuple[pa.Table, pa.Table]:
    """`job_day_goodput` and `chip_time_ledger` rows for the accepted records of some jobs.

    The pipeline's accounting: `sweep_chip_time` then `goodput_tables` (see those for
    `data_end_us`). `mpg explain` calls the two parts itself, to show the frames in between.
    """
    sweep = sweep_chip_time(scheduler, runtime, profiles, data_end_us)
    return goodput_tables(sweep, catalog, metric_versions)
