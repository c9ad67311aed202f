"""What `mpg explain` computes about one job, as frozen values, and their JSON form.

An `Explanation` is built without a terminal (`mpg.explain.build`) and drawn apart from it
(`mpg.explain.render`), so tests check its numbers, attempts and line ranges as plain values and
scripts read the same values as JSON (`mpg explain --json`): chip-seconds as exact floats, times as
ISO 8601 UTC.

    >>> format_ranges(((1201, 1350), (1400, 1400)))
    '1201-1350, 1400'
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Any

from mpg.explain.advice import CheckpointAdvice, StepTimes

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def from_epoch_us(us: int) -> dt.datetime:
    """An epoch-microsecond instant (the accounting's unit) as an exact UTC datetime."""
    return EPOCH + dt.timedelta(microseconds=us)


def to_epoch_us(t: dt.datetime) -> int:
    return (t - EPOCH) // dt.timedelta(microseconds=1)


def format_ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    """Inclusive ranges as a person writes them: `12-40, 57`."""
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def _clock(t: dt.datetime, reference: dt.datetime) -> str:
    """A time within a sentence: the clock alone when on `reference`'s day, else date and clock."""
    return t.strftime("%H:%M:%S" if t.date() == reference.date() else "%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Scope:
    """The part of a job's time on show: its wanted window, cut to the day asked for, if any.

    `days` are the shown UTC days the job has rows on; the window is [start_us, end_us).
    """

    days: tuple[dt.date, ...]
    start_us: int
    end_us: int


@dataclass(frozen=True)
class LineRanges:
    """Lines of one input file (path relative to the trace root), as inclusive ranges."""

    file: str
    ranges: tuple[tuple[int, int], ...]

    @property
    def lines(self) -> int:
        return sum(b - a + 1 for a, b in self.ranges)


# The input records behind a figure: line ranges per file, files in name order.
Provenance = tuple[LineRanges, ...]


@dataclass(frozen=True)
class Record:
    """One input record that a figure names on its own (the record that set the end of data)."""

    instant: dt.datetime
    file: str
    line: int


@dataclass(frozen=True)
class Figure:
    """One row of the waterfall: a total, or a loss taken from the total above it.

    Totals are wanted, all_allocated, productive and ideal (or productive_unprofiled where no
    shown day has a PG); losses are ledger categories. `share` is of wanted chip-time (SQL's:
    None where nothing was wanted).
    """

    name: str
    is_total: bool
    chip_s: float
    share: float | None
    records: Provenance


@dataclass(frozen=True)
class Ratios:
    """SG, RG, PG and MPG of the shown days; pg_coverage: the share of productive time with a PG."""

    sg: float | None
    rg: float | None
    pg: float | None
    pg_coverage: float | None
    mpg: float | None


@dataclass(frozen=True)
class Lost:
    """What the job lost on the shown days, as the semantic layer counts it for every surface
    (sql/semantic/job_days.sql): every ledger category but ideal, in chip-seconds and, where its
    chip generation has a price, in dollars, each in four parts; its main loss; and, over its
    whole life, its rank among the fleet's jobs (the one ranking of worst jobs)."""

    lost_chip_s: float
    lost_scheduling_chip_s: float
    lost_runtime_chip_s: float
    lost_program_chip_s: float
    lost_unprofiled_chip_s: float
    main_loss: str | None
    usd_per_chip_hour: float | None
    unpriced_chip_s: float
    wanted_usd: float | None
    lost_usd: float | None
    lost_scheduling_usd: float | None
    lost_runtime_usd: float | None
    lost_program_usd: float | None
    lost_unprofiled_usd: float | None
    rank: int | None  # over the job's whole life; None for one day
    jobs_ranked: int | None


@dataclass(frozen=True)
class JobDay:
    """A published job_day_goodput row with the job-day's chip_time_ledger rows."""

    day: dt.date
    wanted_chip_s: float
    all_allocated_chip_s: float
    productive_chip_s: float
    ideal_chip_s: float | None
    sg: float | None
    rg: float | None
    pg: float | None
    mpg: float | None
    ledger: dict[str, float]


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint_save: the step it covers and when it ended (when that progress was durable)."""

    step: int
    ended: dt.datetime


@dataclass(frozen=True)
class Attempt:
    """One incarnation of the job's program, and what its steps came to.

    `end` is None for the last attempt of a job still open. `keeps_every_step` says why every step
    is kept where the rule keeps them wholesale (serving, bulk inference, the last attempt of a job
    that finished or is open); otherwise training steps above `durable` are lost. `late_save` is
    the attempt's checkpoint_save of the largest step among those that ended after the attempt
    did. `lost_chip_s` counts the shown days only.
    """

    attempt: int
    start: dt.datetime
    end: dt.datetime | None
    ended_by: str
    steps: tuple[int, int] | None
    durable: Checkpoint | None
    late_save: Checkpoint | None
    keeps_every_step: str | None
    lost_steps: tuple[tuple[int, int], ...]
    lost_chip_s: float
    lost_records: Provenance

    @property
    def missed_checkpoint(self) -> str | None:
        """Which checkpoint the lost steps needed, in one sentence; None when none was lost."""
        if not self.lost_steps:
            return None
        one = len(self.lost_steps) == 1 and self.lost_steps[0][0] == self.lost_steps[0][1]
        lost = f"{'step' if one else 'steps'} {format_ranges(self.lost_steps)} lost"
        if self.durable is None and self.late_save is None:
            return f"{lost}: no checkpoint saved in this attempt"
        saved = (
            f"last durable checkpoint step {self.durable.step} at "
            f"{_clock(self.durable.ended, self.start)}"
            if self.durable
            else "no checkpoint ended in time"
        )
        if self.late_save is None or self.end is None:
            return f"{lost}: {saved}; no later checkpoint_save in this attempt"
        return (
            f"{lost}: {saved}; a checkpoint_save for step {self.late_save.step} ended at "
            f"{_clock(self.late_save.ended, self.start)}, after the attempt ended at "
            f"{_clock(self.end, self.start)}"
        )


@dataclass(frozen=True)
class Difference:
    """A ledger figure that the recomputation from the record store does not reproduce."""

    day: dt.date
    category: str
    published: float
    recomputed: float


@dataclass(frozen=True)
class JobHeader:
    """Who the job is and when it wanted chips; `data_end` is set for a job still open."""

    job_id: str
    workload_class: str
    framework: str
    chip_generation: str
    chips_requested: int
    submitted: dt.datetime
    ended: dt.datetime | None
    end_state: str | None
    data_end: Record | None


@dataclass(frozen=True)
class Explanation:
    """One job's ledger on the shown days (one `day`, else all `days`), from figures to lines.

    Figures and ratios are the published ones (`database`); attempts and provenance come from the
    job's records in the record store, accounted again with the pipeline's own functions, and
    `differences` lists where that recomputation does not give the published ledger.
    """

    job: JobHeader
    metric_version: str
    database: str
    day: dt.date | None
    days: tuple[dt.date, ...]
    waterfall: tuple[Figure, ...]
    ratios: Ratios
    per_day: tuple[JobDay, ...]
    attempts: tuple[Attempt, ...]
    records_read: int
    differences: tuple[Difference, ...]
    lost: Lost
    # Beside the ledger (issue 15): the job's checkpoint advice (whole life; None for a job
    # without one) and its step times on the shown days.
    checkpoint_advice: CheckpointAdvice | None = None
    step_times: tuple[StepTimes, ...] = ()

    @property
    def matches(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        """The explanation as JSON values: exact floats, ISO 8601 UTC times, ranges as pairs."""
        plain = _jsonable(self)
        plain["matches_published"] = self.matches
        for attempt, out in zip(self.attempts, plain["attempts"], strict=True):
            out["missed_checkpoint"] = attempt.missed_checkpoint
        return plain


def _jsonable(value: object) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value
