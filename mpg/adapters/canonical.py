"""What every adapter produces: the spec's canonical records, as Polars frames, and how they are
written into a trace root that `mpg run --traces ROOT` reads unchanged.

An adapter fills frames whose columns are the spec's fields (any subset, in any order; time
columns as UTC datetimes). A frame's rows become JSON lines in one vectorised pass: the fields in
the spec's order, times as RFC 3339 in UTC, a null field left out. Strings are JSON-escaped by
Polars, so job names from the wild cannot break a line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mpg.schemas import TIME_FIELDS, TRACE_FIELDS

UTC_TIME = pl.Datetime("us", "UTC")

# One row per input record an adapter could not use.
QUARANTINE_SCHEMA = {"file": pl.String, "line": pl.Int64, "reason": pl.String, "raw": pl.String}


def empty_quarantine() -> pl.DataFrame:
    return pl.DataFrame(schema=QUARANTINE_SCHEMA)


@dataclass(frozen=True)
class Batch:
    """Canonical records written together, under one name: re-importing the same name replaces
    them, so an adapter names a batch after what it covers (a job, a source file)."""

    name: str
    scheduler: pl.DataFrame | None = None
    runtime: pl.DataFrame | None = None
    profiles: pl.DataFrame | None = None

    def frames(self) -> dict[str, pl.DataFrame]:
        found = {"scheduler": self.scheduler, "runtime": self.runtime, "profiles": self.profiles}
        return {s: f for s, f in found.items() if f is not None and f.height}


def batches_by_file(
    paths: Sequence[Path], scheduler: pl.DataFrame, runtime: pl.DataFrame | None
) -> list[Batch]:
    """One batch per input file, named after it, of the records whose `file` column is the
    file's place in `paths`: re-importing a file replaces what it gave before."""

    def of(frame: pl.DataFrame, number: int) -> pl.DataFrame:
        return frame.filter(pl.col("file") == number).drop("file")

    return [
        Batch(str(path.resolve()), of(scheduler, n), None if runtime is None else of(runtime, n))
        for n, path in enumerate(paths)
    ]


@dataclass(frozen=True)
class Conversion:
    """An adapter's whole answer. `read` counts input records in the adapter's own unit (a log
    line, a CSV row, a profiled step); each was converted, quarantined, or ignored as about no
    job (counted by what it is, e.g. `Pod events`): `read = converted + quarantined + ignored`,
    checked when written.

    An adapter that keeps what earlier imports read (kubernetes) derives its quarantine from all
    of it: `quarantine` then holds earlier imports' rows too, written to the one file
    `quarantine_name` names (replacing it), and `quarantined` counts this input's records."""

    read: int
    converted: int
    batches: Sequence[Batch] = ()
    quarantine: pl.DataFrame = field(default_factory=empty_quarantine)
    ignored: Mapping[str, int] = field(default_factory=dict)
    quarantined: int | None = None
    quarantine_name: str | None = None

    @property
    def quarantined_here(self) -> int:
        return self.quarantine.height if self.quarantined is None else self.quarantined


# At one instant: a job's submit, then its tasks' releases, then their schedules, then its end (a
# release and a schedule at one instant are a move, not two allocations at once).
_RANK_AT_AN_INSTANT = {"JOB_SUBMIT": 0, "TASK_SCHEDULE": 2, "JOB_END": 3}  # a release: 1

Frames = pl.DataFrame | Sequence[pl.DataFrame]


def scheduler_events(
    *,
    submits: Frames = (),
    schedules: Frames = (),
    releases: Frames = (),
    ends: Frames = (),
    first_by: Sequence[str] = (),
) -> pl.DataFrame:
    """An adapter's canonical scheduler events, in one table: its `JOB_SUBMIT`s, `TASK_SCHEDULE`s,
    releases (each row with its own `type`: `TASK_FINISH`, `TASK_FAIL`, `TASK_EVICT` or
    `TASK_LOST`) and `JOB_END`s, each frame with `ts`, `job_id` and its type's fields (any other
    column, such as the batch a row belongs to, rides along).

    The rows are in time order, whatever order the adapter's grouping gave them, so that the same
    input imports to the same bytes: by `first_by` (a batch's own key, where a batch holds many
    jobs' events apart), then time, job, the order of types at one instant, task."""
    typed = [
        *(f.with_columns(pl.lit("JOB_SUBMIT").alias("type")) for f in _frames(submits)),
        *(f.with_columns(pl.lit("TASK_SCHEDULE").alias("type")) for f in _frames(schedules)),
        *_frames(releases),
        *(f.with_columns(pl.lit("JOB_END").alias("type")) for f in _frames(ends)),
    ]
    rank = pl.col("type").replace_strict(_RANK_AT_AN_INSTANT, default=1, return_dtype=pl.Int8)
    return pl.concat(typed, how="diagonal").sort(
        *first_by, "ts", "job_id", rank, "task_index", nulls_last=True, maintain_order=True
    )


def _frames(frames: Frames) -> Sequence[pl.DataFrame]:
    return [frames] if isinstance(frames, pl.DataFrame) else frames


def rfc3339(column: str) -> pl.Expr:
    """A UTC datetime as RFC 3339 with `Z`: whole seconds, or microseconds when it has any."""
    t = pl.col(column).dt.convert_time_zone("UTC")
    return (
        pl.when(t.dt.microsecond() == 0)
        .then(t.dt.strftime("%Y-%m-%dT%H:%M:%SZ"))
        .otherwise(t.dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))
        .alias(column)
    )


def json_lines(source: str, frame: pl.DataFrame) -> pl.Series:
    """One canonical JSON line per row of `frame`, with the spec's fields that it has."""
    unknown = set(frame.columns) - set(TRACE_FIELDS[source])
    if unknown:
        raise ValueError(f"{source}: not fields of the spec: {sorted(unknown)}")
    present = [f for f in TRACE_FIELDS[source] if f in frame.columns]
    columns = [rfc3339(f) if f in TIME_FIELDS else pl.col(f) for f in present]
    encoded = pl.struct(columns).struct.json_encode()
    # Inside a JSON string a quote is escaped, so `,"name":null` can only be a null field.
    return frame.select(encoded.str.replace_all(r',"[a-z_]+":null', "").alias("line")).to_series()
