"""What the xplane adapter takes from one capture: its step annotations, the XLA program launches
in it, the compiled HLO module of each program, and the wall clock the capture started at.

One pass over the events decodes them into columns (protobuf gives no vectorised access); all
that follows is Polars. Times stay as integer picoseconds from an origin (the first line's start)
until the end, where `origin_ns` makes them absolute (docs/adapters/xplane.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from google.protobuf.message import DecodeError

from mpg.adapters.xplane_proto import XSpace
from mpg.core.errors import TraceFileError

# Names the profiler gives its planes and stats (xla/tsl/profiler/utils/xplane_schema.cc).
METADATA_PLANE = "/host:metadata"
HOST_PLANE_PREFIX = "/host:"
TASK_ENVIRONMENT_PLANE = "Task Environment"
STEP_NUM, PROGRAM_ID, RUN_ID = "step_num", "program_id", "run_id"
HLO_PROTO, PROFILE_START = "Hlo Proto", "profile_start_time"
# A line timestamp at or past 2000-01-01 is absolute already (older captures were not
# re-based on the session's start); a re-based one is an offset of seconds or hours.
ABSOLUTE_NS = 946_684_800 * 10**9

STEP_SCHEMA = {
    "name": pl.String,
    "step_num": pl.String,  # as recorded: an integer, or whatever text the annotation carried
    "start_ps": pl.Int64,
    "duration_ps": pl.Int64,
}
LAUNCH_SCHEMA = {"program_id": pl.Int64, "run_id": pl.Int64, "start_ps": pl.Int64}


@dataclass(frozen=True)
class Capture:
    """One xplane, decoded. `steps`: one row per step annotation (STEP_SCHEMA), in the order
    they started. `launches`: one row per launch of a program (LAUNCH_SCHEMA): a `(program_id,
    run_id)` pair, however many devices and ops it ran on, starting at its first event.
    `programs`: program id -> its serialized `xla.HloModuleProto`."""

    origin_ns: int  # nanoseconds since the epoch of the capture's time 0
    steps: pl.DataFrame
    launches: pl.DataFrame
    programs: dict[int, bytes]


def _value(stat: Any, stat_names: dict[int, str]) -> Any:
    kind = stat.WhichOneof("value")
    if kind == "ref_value":  # a string kept once, in the plane's stat metadata
        return stat_names.get(stat.ref_value)
    return getattr(stat, kind) if kind else None


def read_capture(path: Path) -> Capture:
    try:
        return _decode(path, XSpace.FromString(path.read_bytes()))
    except DecodeError as exc:
        raise TraceFileError(f"{path}: not an xplane (XSpace protobuf): {exc}") from exc
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot be read: {exc.strerror or exc}") from exc


def _decode(path: Path, space: Any) -> Capture:
    if not any(plane.name.startswith(HOST_PLANE_PREFIX) for plane in space.planes):
        raise TraceFileError(f"{path}: not an xplane: no {HOST_PLANE_PREFIX}* plane")
    # The capture's time 0: its first line's start. Offsets from it fit in int64 picoseconds.
    first_line_ns = next((line.timestamp_ns for p in space.planes for line in p.lines), 0)
    steps: dict[str, list[Any]] = {name: [] for name in STEP_SCHEMA}
    launches: dict[tuple[int, int], int] = {}
    programs: dict[int, bytes] = {}
    profile_start_ns: int | None = None
    for plane in space.planes:
        stat_names = {entry.key: entry.value.name for entry in plane.stat_metadata}
        if plane.name == METADATA_PLANE:
            programs.update(_programs(plane, stat_names))
        elif plane.name == TASK_ENVIRONMENT_PLANE:
            found = {stat_names.get(s.metadata_id): _value(s, stat_names) for s in plane.stats}
            profile_start_ns = found.get(PROFILE_START)
        _scan(plane, stat_names, first_line_ns, steps, launches)
    if not steps["start_ps"]:
        raise TraceFileError(
            f"{path}: no step annotations (events with a {STEP_NUM} stat, as "
            "jax.profiler.StepTraceAnnotation writes)"
        )
    if profile_start_ns is None:
        if first_line_ns < ABSOLUTE_NS:
            raise TraceFileError(
                f"{path}: no {PROFILE_START} in its {TASK_ENVIRONMENT_PLANE!r} plane, so its "
                "times cannot be placed on the wall clock"
            )
        profile_start_ns = 0  # the lines' times are absolute already
    launch_frame = pl.DataFrame(
        [(p, r, s) for (p, r), s in launches.items()], schema=LAUNCH_SCHEMA, orient="row"
    )
    return Capture(
        origin_ns=int(profile_start_ns) + first_line_ns,
        steps=pl.DataFrame(steps, schema=STEP_SCHEMA).sort("start_ps", maintain_order=True),
        launches=launch_frame.sort("start_ps"),
        programs=programs,
    )


def _scan(
    plane: Any,
    stat_names: dict[int, str],
    first_line_ns: int,
    steps: dict[str, list[Any]],
    launches: dict[tuple[int, int], int],
) -> None:
    """Adds the plane's step annotations (host planes only) to `steps` and its launches'
    earliest starts to `launches`. Only the stats it looks for are decoded: a capture holds
    millions of op events."""
    ids = {name: key for key, name in stat_names.items()}
    step_id = ids.get(STEP_NUM) if plane.name.startswith(HOST_PLANE_PREFIX) else None
    program_id, run_id = ids.get(PROGRAM_ID), ids.get(RUN_ID)
    wanted = {step_id, program_id, run_id} - {None}
    if not wanted:
        return
    event_names = {entry.key: entry.value.name for entry in plane.event_metadata}
    for line in plane.lines:
        line_ps = (line.timestamp_ns - first_line_ns) * 1000
        for event in line.events:
            stats = {s.metadata_id: s for s in event.stats if s.metadata_id in wanted}
            if not stats:
                continue
            start_ps = line_ps + event.offset_ps
            if step_id in stats:
                steps["name"].append(event_names.get(event.metadata_id, ""))
                steps["step_num"].append(str(_value(stats[step_id], stat_names)))
                steps["start_ps"].append(start_ps)
                steps["duration_ps"].append(event.duration_ps)
            if program_id in stats and run_id in stats:
                key = (
                    int(_value(stats[program_id], stat_names)),
                    int(_value(stats[run_id], stat_names)),
                )
                launches[key] = min(launches.get(key, start_ps), start_ps)


def _programs(plane: Any, stat_names: dict[int, str]) -> dict[int, bytes]:
    """Program id -> HLO module, from the metadata plane: one event metadata entry per program,
    its `Hlo Proto` stat holding an `xla.HloProto` (whose field 1 is the module). The program id
    is the entry's `program_id` stat where it has one, else its key (as XLA wrote it before)."""
    from mpg.adapters.xplane_proto import HloProto

    found: dict[int, bytes] = {}
    for entry in plane.event_metadata:
        stats = {stat_names.get(s.metadata_id): s for s in entry.value.stats}
        if HLO_PROTO not in stats:
            continue
        program_id = _value(stats[PROGRAM_ID], stat_names) if PROGRAM_ID in stats else entry.key
        found[int(program_id)] = HloProto.FromString(stats[HLO_PROTO].bytes_value).hlo_module
    return found
