"""The profiled steps of a PyTorch profiler trace (Kineto's Chrome trace JSON), as a frame.

`torch.profiler.profile(schedule=...)` wraps each step between two `prof.step()` calls in a
complete event (`"ph": "X"`) named `ProfilerStep#N` on the host thread that called it, with `ts`
and `dur` in microseconds. A GPU trace repeats the name on the device stream
(`"cat": "gpu_user_annotation"`), covering only the kernels the step launched: that copy is a
view of the same step, not another record, and is left out.

In recent torch (2.11, 2.13), `ts` counts from `baseTimeNanoseconds` (a Unix time in the
trace's top level); in older traces `ts` is itself a Unix time in microseconds and the key is
absent. So a step's
wall-clock start is `baseTimeNanoseconds + ts * 1000` ns, with the key taken as 0 when absent.
A trace whose times are still not Unix times after that can only be placed by the user: with
`--start`, its earliest step starts then; without, the file is refused.

A process of a distributed job names its rank in the top-level `distributedInfo` (`"rank": 1`,
with `world_size`); a trace without one, or with no integer there, has no rank.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mpg.adapters.canonical import QUARANTINE_SCHEMA
from mpg.core.errors import TraceFileError

STEP_PREFIX = "ProfilerStep#"
# Earlier than this, a time is a count from some boot or process start, not a Unix time.
_UNIX_FLOOR_NS = 946_684_800 * 10**9  # 2000-01-01T00:00:00Z

# One row per profiled step of one file: its wall-clock extent in nanoseconds, and `dur` as the
# trace gives it (microseconds), which becomes the step's `step_time_s`.
STEPS_SCHEMA = {"step": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64, "dur_us": pl.Float64}


@dataclass(frozen=True)
class ProfiledSteps:
    read: int  # host-side ProfilerStep events in the file
    steps: pl.DataFrame  # STEPS_SCHEMA, one row per event converted
    quarantine: pl.DataFrame  # QUARANTINE_SCHEMA
    rank: int | None = None  # the process's rank in a distributed job (`distributedInfo`)


def _rank(doc: Any) -> int | None:
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    rank = info.get("rank") if isinstance(info, dict) else None
    return rank if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0 else None


def _load(path: Path) -> Any:
    """The file's JSON, gzipped or not (told by its first bytes, not its name). Lenient where
    only names can be at fault (control characters, bytes that are not UTF-8, which some
    versions have written in op and thread names): the steps do not depend on them."""
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return json.loads(data.decode("utf-8", errors="replace"), strict=False)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise TraceFileError(f"{path}: not a readable gzip file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise TraceFileError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def _number(value: Any) -> float | None:
    """A JSON number of microseconds as a float; anything else (a string, true, NaN, or past
    2^53 µs, 285 years, where nanoseconds overflow) as None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 2**53:
        return float(value)
    return None


def _step_events(path: Path) -> tuple[int, int | None, list[tuple[int, dict[str, Any]]]]:
    """The trace's `baseTimeNanoseconds` (0 when absent), its rank (None when it names none) and
    its host-side ProfilerStep events,
    each with its position in `traceEvents` counting from 1 (the quarantine's `line`: a Chrome
    trace's events do not map to lines). A bare list of events, Chrome's other form, is taken."""
    doc = _load(path)
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise TraceFileError(f"{path}: not a Chrome trace (no traceEvents list)")
    base = doc.get("baseTimeNanoseconds", 0) if isinstance(doc, dict) else 0
    if isinstance(base, bool) or not isinstance(base, int):
        raise TraceFileError(f"{path}: baseTimeNanoseconds is not an integer: {base!r}")
    found = [
        (i, e)
        for i, e in enumerate(events, 1)
        if isinstance(e, dict)
        and isinstance(e.get("name"), str)
        and e["name"].startswith(STEP_PREFIX)
        and not str(e.get("cat", "")).startswith("gpu_")
    ]
    if not found:
        raise TraceFileError(
            f"{path}: no {STEP_PREFIX}N events (profile with schedule= and call prof.step() "
            "after every step)"
        )
    return base, _rank(doc), found


def _field_reason(field: str) -> pl.Expr:
    return (
        pl.when(~pl.col(f"has_{field}"))
        .then(pl.lit(f"missing field: {field}"))
        .when(pl.col(field).is_null())
        .then(pl.lit(f"bad value: {field}"))
    )


def _nanoseconds(column: str) -> pl.Expr:
    """Microseconds (a float) as whole nanoseconds, the whole microseconds apart from the
    fraction: a Unix time in ns is past float precision (~1.7e18 > 2^53), in µs it is not."""
    whole = pl.col(column).floor()
    fraction = ((pl.col(column) - whole) * 1000).round().cast(pl.Int64)
    return whole.cast(pl.Int64) * 1000 + fraction


def profiled_steps(path: Path, start: dt.datetime | None) -> ProfiledSteps:
    """The file's host-side ProfilerStep events: each a step of STEPS_SCHEMA, or a quarantine
    row (not a complete event, a step number that is no integer, `ts` or `dur` missing or no
    number, `dur` negative or zero: a step needs a time > 0)."""
    base, rank, found = _step_events(path)
    events = pl.DataFrame(
        {
            "line": [i for i, _ in found],
            "raw": [json.dumps(e) for _, e in found],
            "ph": [str(e.get("ph")) for _, e in found],
            "step": [e["name"].removeprefix(STEP_PREFIX) for _, e in found],
            "ts": [_number(e.get("ts")) for _, e in found],
            "dur": [_number(e.get("dur")) for _, e in found],
            "has_ts": ["ts" in e for _, e in found],
            "has_dur": ["dur" in e for _, e in found],
        },
        schema_overrides={"ts": pl.Float64, "dur": pl.Float64},
    ).with_columns(pl.col("step").str.extract(r"^(\d{1,18})$").cast(pl.Int64))
    reason = (
        pl.when(pl.col("ph") != "X")
        .then(pl.lit("not a complete event (ph X)"))
        .when(pl.col("step").is_null())
        .then(pl.lit("bad step number"))
        .otherwise(
            pl.coalesce(
                _field_reason("ts"),
                _field_reason("dur"),
                pl.when(pl.col("dur") < 0).then(pl.lit("end before start")),
                pl.when(pl.col("dur") == 0).then(pl.lit("zero duration")),
            )
        )
    )
    events = events.with_columns(reason.alias("reason"))
    quarantine = events.filter(pl.col("reason").is_not_null()).select(
        pl.lit(str(path)).alias("file"), "line", "reason", "raw"
    )
    steps = events.filter(pl.col("reason").is_null()).select(
        "step",
        (base + _nanoseconds("ts")).alias("start_ns"),
        _nanoseconds("dur").alias("dur_ns"),
        pl.col("dur").alias("dur_us"),
    )
    steps = _placed(path, steps, start).select(
        "step", "start_ns", (pl.col("start_ns") + pl.col("dur_ns")).alias("end_ns"), "dur_us"
    )
    return ProfiledSteps(
        rank=rank,
        read=events.height,
        steps=steps.cast(STEPS_SCHEMA),
        quarantine=quarantine.cast(QUARANTINE_SCHEMA),
    )


def _placed(path: Path, steps: pl.DataFrame, start: dt.datetime | None) -> pl.DataFrame:
    """`steps` on the wall clock: as they are where their times are Unix times, else moved so
    that the earliest starts at `start`."""
    earliest = steps.get_column("start_ns").min()
    if earliest is None or earliest >= _UNIX_FLOOR_NS:
        return steps
    if start is None:
        raise TraceFileError(
            f"{path}: its times are not wall-clock times (no baseTimeNanoseconds, and ts is no "
            "Unix time): pass --start, the time its first profiled step began"
        )
    shift = (start - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    return steps.with_columns(pl.col("start_ns") - earliest + shift * 1000)
