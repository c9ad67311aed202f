"""Reading Microsoft Philly job logs into two Polars frames, jobs and attempts, and deciding which
jobs can be used (docs/adapters/philly.md).

Two shapes are read, told apart per file: the trace's own `cluster_job_log` (github.com/msr-fiddle/
philly-traces: `jobid`, `status`, `submitted_time`, `user`, and attempts whose `detail` lists the
GPUs of each machine) and the cleaned list of github.com/marwage/philly-traces
(`analysis/jobs.json`: `id`, `num_gpus`, `submitted_time`, attempts with times only). Both are a
JSON list of jobs, parsed whole: one Python pass flattens it into columns (checking only the
structure, which is all JSON objects offer before they are columns), and every check of values
(times, their order, GPU counts, duplicates) is then a Polars expression over all jobs at once.

Times are local wall-clock strings without a zone; `to_utc` reads them in the zone the user names.
"""

from __future__ import annotations

import gc
import gzip
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mpg.adapters import localtime
from mpg.core.errors import TraceFileError

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# Written by the trace (and read by its authors' notebook) for a time it does not have.
MISSING_TIMES = frozenset({"", "None"})
# `status` of the original trace -> the spec's job state.
STATES = {"Pass": "FINISHED", "Failed": "FAILED", "Killed": "CANCELLED"}

KEY_STRIDE = 2**32  # key = file number x stride + position: one integer per job over all files
JOB_COLUMNS = {
    "key": pl.Int64,
    "file": pl.Int64,
    "position": pl.Int64,  # 1-based place of the job in its file's list: the quarantine's `line`
    "job_id": pl.String,
    "submitted": pl.String,
    "status": pl.String,
    "owner": pl.String,  # `user`
    "team": pl.String,  # `vc`: the virtual cluster whose GPU quota the job ran on
    "problem": pl.String,  # what the structural pass found wrong, if anything
}
ATTEMPT_COLUMNS = {
    "key": pl.Int64,
    "attempt": pl.Int64,
    "start": pl.String,
    "end": pl.String,
    "gpus": pl.Int64,
}


@dataclass(frozen=True)
class Shape:
    """One of the two shapes: where a job's id is, and how an attempt's GPUs are counted."""

    id_field: str
    markers: frozenset[str]
    has_status: bool


ORIGINAL = Shape("jobid", frozenset({"jobid", "status", "vc"}), True)
CLEANED = Shape("id", frozenset({"id", "num_gpus", "runtime"}), False)


@contextmanager
def without_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused: building a few million small JSON objects
    (which hold no cycles) otherwise triggers it over and over, and parsing the whole trace
    takes five times as long."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_jobs(path: Path) -> tuple[list[Any], Shape]:
    """The file's list of jobs and its shape, decided by which shape's keys most jobs carry; a
    file that is not such a list is a one-line error."""
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        with without_gc():
            records = json.loads(data)
    except (OSError, ValueError, EOFError) as exc:
        raise TraceFileError(f"{path}: not a Philly job log: not readable as JSON ({exc})") from exc
    if not isinstance(records, list):
        raise TraceFileError(f"{path}: not a Philly job log: not a JSON list of jobs")
    votes = {
        shape: sum(isinstance(r, dict) and not shape.markers.isdisjoint(r) for r in records)
        for shape in (ORIGINAL, CLEANED)
    }
    if records and not any(votes.values()):
        raise TraceFileError(
            f"{path}: not a Philly job log: its objects have neither jobid/status "
            "(cluster_job_log) nor id/num_gpus (the cleaned jobs.json)"
        )
    return records, max(votes, key=lambda s: votes[s])


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() in MISSING_TIMES)


def _text(value: Any) -> str | None:
    """A time or name as text: missing (null, "", "None") is None; another JSON value becomes its
    JSON text (which no time format reads, so a number where a time belongs is unparseable)."""
    if _missing(value):
        return None
    return value.strip() if isinstance(value, str) else json.dumps(value)


def _detail_gpus(attempt: dict[str, Any], job: dict[str, Any]) -> int | None:
    """GPUs of an original-shape attempt: those listed over all its machines (None: malformed)."""
    detail = attempt.get("detail", [])
    if not isinstance(detail, list):
        return None
    gpus = [m.get("gpus") if isinstance(m, dict) else None for m in detail]
    return sum(len(g) for g in gpus) if all(isinstance(g, list) for g in gpus) else None


def _job_gpus(attempt: dict[str, Any], job: dict[str, Any]) -> int | None:
    """GPUs of a cleaned-shape attempt: the job's `num_gpus` (None: not an integer)."""
    n = job.get("num_gpus")
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _structure_problem(record: Any, shape: Shape) -> str | None:
    """What makes a job unreadable before its values are looked at, if anything."""
    if not isinstance(record, dict):
        return "not a JSON object"
    required = (
        shape.id_field,
        "submitted_time",
        "attempts",
        *(("status",) if shape.has_status else ()),
    )
    for name in required:
        if _missing(record.get(name)):
            return f"missing field: {name}"
    if isinstance(record[shape.id_field], bool) or not isinstance(
        record[shape.id_field], (str, int)
    ):
        return f"invalid field: {shape.id_field}"
    attempts = record["attempts"]
    if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
        return "invalid field: attempts"
    return None


def flatten(records: list[Any], shape: Shape, file: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Jobs and attempts as columns of text, in one pass over the parsed JSON; `key` tells jobs
    apart over all files (`file` is the file's number). A structural fault (not an object, a
    field missing, attempts not a list, GPUs not countable) is the job's `problem`; its values
    are left to `check`."""
    gpus_of: Callable[[dict[str, Any], dict[str, Any]], int | None] = (
        _detail_gpus if shape is ORIGINAL else _job_gpus
    )
    jobs: dict[str, list[Any]] = {c: [] for c in JOB_COLUMNS}
    attempts: dict[str, list[Any]] = {c: [] for c in ATTEMPT_COLUMNS}
    for position, record in enumerate(records, start=1):
        key = file * KEY_STRIDE + position
        problem = _structure_problem(record, shape)
        job = record if problem is None else {}
        for number, attempt in enumerate(job.get("attempts", ())):
            gpus = gpus_of(attempt, job)
            if gpus is None and problem is None:
                problem = (
                    "invalid field: detail" if shape is ORIGINAL else "invalid field: num_gpus"
                )
            attempts["key"].append(key)
            attempts["attempt"].append(number)
            attempts["start"].append(_text(attempt.get("start_time")))
            attempts["end"].append(_text(attempt.get("end_time")))
            attempts["gpus"].append(gpus)
        jobs["key"].append(key)
        jobs["file"].append(file)
        jobs["position"].append(position)
        jobs["job_id"].append(_text(job.get(shape.id_field)))
        jobs["submitted"].append(_text(job.get("submitted_time")))
        jobs["status"].append(_text(job.get("status")) if shape.has_status else "Pass")
        jobs["owner"].append(_text(job.get("user")))
        jobs["team"].append(_text(job.get("vc")))
        jobs["problem"].append(problem)
    return pl.DataFrame(jobs, schema=JOB_COLUMNS), pl.DataFrame(attempts, schema=ATTEMPT_COLUMNS)


def to_utc(column: str, timezone: str) -> list[pl.Expr]:
    """`column` (Philly's local wall-clock text) as `<column>_utc` and `<column>_bad`
    (`localtime.to_utc`)."""
    return localtime.to_utc(column, timezone, TIME_FORMAT)


def _when(condition: pl.Expr, reason: str) -> pl.Expr:
    return pl.when(condition).then(pl.lit(reason))


def check(jobs: pl.DataFrame, attempts: pl.DataFrame, timezone: str) -> tuple[pl.DataFrame, ...]:
    """Jobs and attempts with UTC times, whether each job `ended` (its last attempt has an end),
    and its `reason` to be quarantined (null where it is usable): the first rule of
    docs/adapters/philly.md that applies.

    An attempt may lack a start or an end only where the trace says it may: the last attempt of
    a job still running has no end, and one not yet started has neither. Of several jobs with
    one id, the first usable one is kept.
    """
    jobs = jobs.with_columns(to_utc("submitted", timezone))
    attempts = (
        attempts.join(jobs.select("key", "submitted_utc"), on="key")
        .sort("key", "attempt")
        .with_columns(
            *to_utc("start", timezone),
            *to_utc("end", timezone),
            (pl.col("attempt") == pl.col("attempt").max().over("key")).alias("last"),
        )
        .with_columns(pl.col("end_utc").shift(1).over("key").alias("previous_end"))
    )
    attempts = attempts.with_columns(
        pl.coalesce(
            "start_bad",
            "end_bad",
            _when(
                pl.col("start").is_null() & (pl.col("end").is_not_null() | ~pl.col("last")),
                "attempt without start_time",
            ),
            _when(pl.col("end").is_null() & ~pl.col("last"), "attempt without end_time"),
            _when(pl.col("end_utc") < pl.col("start_utc"), "end before start"),
            _when(pl.col("end_utc") < pl.col("submitted_utc"), "attempt ends before submission"),
            _when(pl.col("start_utc") < pl.col("previous_end"), "overlapping attempts"),
            _when(pl.col("start").is_not_null() & (pl.col("gpus") <= 0), "zero GPUs"),
        ).alias("reason")
    )
    per_job = attempts.group_by("key").agg(
        pl.col("reason").drop_nulls().first().alias("attempt_reason"),
        pl.col("gpus").first().alias("chips_requested"),
        pl.col("end").last().is_not_null().alias("ended"),
    )
    jobs = jobs.join(per_job, on="key", how="left").with_columns(
        pl.coalesce(
            "problem",
            "submitted_bad",
            # A job still running has no outcome yet, so only an ended job's status must be one.
            _when(pl.col("ended") & ~pl.col("status").is_in(list(STATES)), "unknown status"),
            _when(pl.col("chips_requested").is_null(), "no attempts"),
            _when(pl.col("chips_requested") <= 0, "zero GPUs"),
            "attempt_reason",
        ).alias("reason")
    )
    later = pl.col("reason").is_null() & pl.col("reason").is_null().cum_sum().over("job_id").gt(1)
    jobs = jobs.sort("key").with_columns(
        pl.when(later).then(pl.lit("duplicate job id")).otherwise("reason").alias("reason")
    )
    return jobs, attempts
