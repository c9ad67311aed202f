"""Training fleets whose interruption rates and checkpoint intervals are given: the truth against
which the checkpoint advice (`mpg.transforms.checkpoints`) is validated.

Every job holds all its chips (its `tasks` tasks, a gang) from the window's start, runs attempt
after attempt, and ends FINISHED at the window's end. An attempt is init, compile (and, after a
restart, a checkpoint_restore of the last durable step), then back-to-back steps of `step_s` with
a blocking save of `save_s` after every `checkpoint_every`-th step. Interruptions come as a
Poisson process in all-allocated time, `interrupts_per_hour` per hour: every task of the gang is
evicted (the first at the instant, the others `teardown_s` later), the step in progress is
reported cut at the eviction (its time is lost progress, as it truly is), a save in progress is
not reported, and the tasks are scheduled again `reschedule_s` after the last is released.
Two more kinds, each a known interruption:
- with chance `restart_in_place_p` an interruption is a crash the program restarts from on the
  chips it holds: no scheduler event, the next attempt starts at once;
- with chance `crash_in_init_p` an attempt crashes during its init (at a uniform instant of it)
  before writing any span: the scheduler logs TASK_FAIL for its tasks and schedules them again
  `reschedule_s` later; its attempt number is used up where `numbers_crashed_attempts` (the
  runtime counts the incarnation), else the next attempt takes it.
Unlike `mpg simulate`, nothing here is noise: the knobs are the truth, and `FleetTables.truth`
counts each job's interruptions of each kind as drawn, and those its runtime records cannot show
(`unseen_by_runtime`: crashes whose attempt number is not used up, and every interruption after
the job's last attempt that wrote spans began).

The interruptions of a job depend only on the seed and the job's position, not on its checkpoint
interval, so the same fleet can be replayed at another interval (common random numbers):
`replace(job, checkpoint_every=k)`.

    tables = checkpoint_fleet([CheckpointJob("train-0", chips=8, step_s=60, checkpoint_every=20,
                               save_s=45, interrupts_per_hour=0.2)], days=7, seed=1)

Steps are generated vectorised per attempt; the Python loop runs per attempt.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from mpg.definitions.vocabulary import SPAN_KINDS
from mpg.schemas import CHECKPOINT_ADVICE_BY_SLICE, RECORD_SCHEMAS, conform
from mpg.simulate.simulator import DEFAULT_START
from mpg.sql.files import load_sql

_US = 1_000_000
_EVENT_SCHEMA = {
    "type": pl.String,
    "t": pl.Float64,
    "task_index": pl.Int64,
    "chips": pl.Int64,
    "state": pl.String,
}

_TRUTH_SCHEMA = {
    "job_id": pl.String,
    "evictions": pl.Int64,
    "restarts_in_place": pl.Int64,
    "crashes_in_init": pl.Int64,
    "unseen_by_runtime": pl.Int64,
}


@dataclass(frozen=True)
class CheckpointJob:
    """One training job's knobs (seconds); `interrupts_per_hour` counts per all-allocated hour."""

    job_id: str
    chips: int
    step_s: float
    checkpoint_every: int
    save_s: float
    interrupts_per_hour: float
    init_s: float = 60.0
    compile_s: float = 240.0
    restore_s: float = 120.0
    reschedule_s: float = 600.0
    chip_generation: str = "tpu-v5p"
    framework: str = "jax"
    tasks: int = 1
    teardown_s: float = 0.0
    restart_in_place_p: float = 0.0
    crash_in_init_p: float = 0.0
    numbers_crashed_attempts: bool = True


@dataclass(frozen=True)
class FleetTables:
    """A fleet's accepted records, as `sweep_chip_time` takes them, and the truth: per job, its
    interruptions (`evictions` + `restarts_in_place` + `crashes_in_init`), and of them those
    `unseen_by_runtime`."""

    scheduler: pa.Table
    runtime: pa.Table
    profiles: pa.Table
    data_end_us: int
    truth: pl.DataFrame


class _Spans:
    """One job's spans, collected per attempt as numpy arrays (seconds), framed once."""

    def __init__(self) -> None:
        self.columns: list[tuple[np.ndarray, ...]] = []

    def add(
        self, attempt: int, kind: str, start: np.ndarray, end: np.ndarray, step: np.ndarray | None
    ) -> None:
        n = len(start)
        steps = np.full(n, -1, np.int64) if step is None else np.asarray(step, np.int64)
        code = np.full(n, SPAN_KINDS.index(kind), np.int8)
        self.columns.append((np.full(n, attempt, np.int64), code, start, end, steps))

    def frame(self) -> pl.DataFrame:
        attempt, code, start, end, step = (
            np.concatenate(c) for c in zip(*self.columns, strict=True)
        )
        return pl.DataFrame(
            {
                "attempt": attempt,
                "kind": code,
                "start": np.rint(start * _US).astype(np.int64),
                "end": np.rint(end * _US).astype(np.int64),
                "step": step,
            }
        ).with_columns(
            pl.col("kind").replace_strict(dict(enumerate(SPAN_KINDS)), return_dtype=pl.String),
            pl.when(pl.col("step") >= 0).then(pl.col("step")).alias("step"),
        )


def _attempt(
    job: CheckpointJob, spans: _Spans, attempt: int, t: float, stop: float, durable: int
) -> int:
    """Emit one attempt from `t` (its chips just scheduled) to `stop` (an eviction, or the window's
    end); returns its last durable step."""
    startup = [("init", job.init_s, None), ("compile", job.compile_s, None)]
    if attempt:
        startup.append(("checkpoint_restore", job.restore_s, durable))
    for kind, length, step in startup:
        end = min(t + length, stop)
        spans.add(
            attempt,
            kind,
            np.array([t]),
            np.array([end]),
            None if step is None else np.array([step]),
        )
        t = end
        if t >= stop:
            return durable
    k, first = job.checkpoint_every, durable + 1
    n = math.ceil((stop - t) / job.step_s) + 1  # more steps than fit before `stop`
    step = np.arange(first, first + n, dtype=np.int64)
    saves_before = (step - 1) // k - (first - 1) // k
    start = t + (step - first) * job.step_s + saves_before * job.save_s
    end = start + job.step_s
    started = start < stop
    spans.add(attempt, "step", start[started], np.minimum(end, stop)[started], step[started])
    saved = (step % k == 0) & (end + job.save_s <= stop)
    spans.add(attempt, "checkpoint_save", end[saved], end[saved] + job.save_s, step[saved])
    return int(step[saved][-1]) if saved.any() else durable


def _job_records(
    job: CheckpointJob, rng: np.random.Generator, window_s: float
) -> tuple[list[tuple], pl.DataFrame, dict[str, int]]:
    """The job's scheduler events (type, seconds, task, chips, state), spans, and the count of
    each kind of interruption it drew."""
    tasks = range(job.tasks)
    chips = [len(c) for c in np.array_split(np.arange(job.chips), job.tasks)]

    def gang(kind: str, at: float, last: float) -> list[tuple]:
        """An event of each task, the first at `at` and the others at `last`."""
        return [(kind, at if i == 0 else last, i, None, None) for i in tasks]

    events: list[tuple] = [("JOB_SUBMIT", 0.0, None, None, None)]
    events += [("TASK_SCHEDULE", 0.0, i, chips[i], None) for i in tasks]
    spans = _Spans()
    truth = dict.fromkeys(_TRUTH_SCHEMA.keys() - {"job_id"}, 0)
    unnumbered, since_attempt = 0, 0  # crashes not numbered, interruptions, since an attempt
    mean_gap = 3600 / job.interrupts_per_hour if job.interrupts_per_hour > 0 else math.inf
    t, attempt, durable = 0.0, 0, 0
    while True:
        evict = t + rng.exponential(mean_gap) if math.isfinite(mean_gap) else math.inf
        # drawn whatever the interval, so that replays draw the same (common random numbers)
        crash = math.inf
        if job.crash_in_init_p > 0:
            at, crashes = t + rng.uniform(0, job.init_s), rng.random() < job.crash_in_init_p
            crash = at if crashes else math.inf
        in_place = job.restart_in_place_p > 0 and rng.random() < job.restart_in_place_p
        if crash < min(evict, window_s):
            truth["crashes_in_init"] += 1
            events += gang("TASK_FAIL", crash, crash)
            stop = crash
            since_attempt += 1
            if not job.numbers_crashed_attempts:
                attempt -= 1  # the next attempt takes its number
                unnumbered += 1
        else:
            durable = _attempt(job, spans, attempt, t, min(evict, window_s), durable)
            truth["unseen_by_runtime"] += unnumbered
            unnumbered, since_attempt = 0, 0
            if evict >= window_s:
                break
            since_attempt += 1
            if in_place:
                truth["restarts_in_place"] += 1
                t, attempt = evict, attempt + 1
                continue
            truth["evictions"] += 1
            stop = min(evict + job.teardown_s, window_s)  # the gang's last task released
            events += gang("TASK_EVICT", evict, stop)
        t = stop + job.reschedule_s
        if t >= window_s:
            break
        events += [("TASK_SCHEDULE", t, i, chips[i], None) for i in tasks]
        attempt += 1
    truth["unseen_by_runtime"] += since_attempt
    events += [("TASK_FINISH", window_s, i, None, None) for i in tasks]
    events.append(("JOB_END", window_s, None, None, "FINISHED"))
    return events, spans.frame(), truth


def checkpoint_fleet(
    jobs: Sequence[CheckpointJob], days: float, seed: int, start: dt.date = DEFAULT_START
) -> FleetTables:
    """The records of `jobs` over `days` days from `start`, the interruptions of the i-th job
    drawn from the i-th stream spawned from `seed`."""
    epoch_us = int(dt.datetime.combine(start, dt.time(), tzinfo=dt.UTC).timestamp()) * _US
    window_s = days * 86_400
    streams = np.random.SeedSequence(seed).spawn(len(jobs))
    scheduler, runtime, truth = [], [], []
    for job, stream in zip(jobs, streams, strict=True):
        rng = np.random.Generator(np.random.PCG64(stream))
        events, spans, drawn = _job_records(job, rng, window_s)
        truth.append({"job_id": job.job_id, **drawn})
        scheduler.append(
            pl.DataFrame(events, schema=_EVENT_SCHEMA, orient="row").with_columns(
                pl.lit(job.job_id).alias("job_id"),
                pl.when(pl.col("type") == "JOB_SUBMIT")
                .then(pl.lit(job.chips))
                .alias("chips_requested"),
                pl.when(pl.col("type") == "JOB_SUBMIT")
                .then(pl.lit(job.chip_generation))
                .alias("chip_generation"),
                pl.when(pl.col("type") == "JOB_SUBMIT")
                .then(pl.lit("training"))
                .alias("workload_class"),
                pl.when(pl.col("type") == "JOB_SUBMIT")
                .then(pl.lit(job.framework))
                .alias("framework"),
            )
        )
        runtime.append(spans.with_columns(pl.lit(job.job_id).alias("job_id")))
    return FleetTables(
        scheduler=_records(
            "scheduler", pl.concat(scheduler).with_columns(_time(pl.col("t") * _US, epoch_us, "ts"))
        ),
        runtime=_records(
            "runtime",
            pl.concat(runtime).with_columns(
                _time(pl.col("start"), epoch_us, "start"), _time(pl.col("end"), epoch_us, "end")
            ),
        ),
        profiles=RECORD_SCHEMAS["profiles"].empty_table(),
        data_end_us=epoch_us + round(window_s * _US),
        truth=pl.DataFrame(truth, schema=_TRUTH_SCHEMA).with_columns(
            pl.sum_horizontal("evictions", "restarts_in_place", "crashes_in_init").alias(
                "interruptions"
            )
        ),
    )


def _time(micros: pl.Expr, epoch_us: int, name: str) -> pl.Expr:
    return (micros.round().cast(pl.Int64) + epoch_us).cast(pl.Datetime("us", "UTC")).alias(name)


def _records(source: str, frame: pl.DataFrame) -> pa.Table:
    """`frame` as the source's records, each with a made-up provenance (file, line)."""
    schema = RECORD_SCHEMAS[source]
    types = pl.from_arrow(schema.empty_table()).schema
    framed = frame.with_columns(
        *(
            pl.lit(None, types[name]).alias(name)
            for name in types
            if name not in frame.columns and name not in ("file", "line")
        ),
        pl.lit(f"simulated/{source}.jsonl").alias("file"),
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("line"),
    )
    return conform(framed.to_arrow(), schema)


def advice_by_slice(advice: pa.Table) -> pa.Table:
    """CHECKPOINT_ADVICE_BY_SLICE from CHECKPOINT_ADVICE rows: the analysts' view
    (sql/views/checkpoint_advice_by_slice.sql, its one definition) on an in-memory DuckDB."""
    with duckdb.connect() as con:
        con.execute(load_sql("publish/macros.sql"))
        con.register("checkpoint_advice", advice)
        con.execute(load_sql("views/checkpoint_advice_by_slice.sql"))
        rows = con.table("checkpoint_advice_by_slice").to_arrow_table()
    return conform(rows, CHECKPOINT_ADVICE_BY_SLICE)
