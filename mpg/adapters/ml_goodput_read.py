"""Reading ml-goodput-measurement logs: each record (a line, or an element of a JSON array)
checked and turned into one event row, or a quarantine row with its reason.

Records are parsed one at a time because a record is the unit of quarantine; everything after
this (attempts, spans) is vectorised over the events frame (`ml_goodput.py`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl

from mpg.adapters.canonical import QUARANTINE_SCHEMA

# Recorder fields that start or end an interval, by the span kind (or `custom`) they make.
PAIRS = {
    "init": ("tpu_init_start_time", "tpu_init_end_time"),
    "compile": ("training_prep_start_time", "training_prep_end_time"),
    "data_wait": ("data_loading_start_time", "data_loading_end_time"),
    "custom": ("custom_badput_event_start_time", "custom_badput_event_end_time"),
}
# Orbax's event_type -> (start field, duration field) of its blocking time.
_ORBAX = {
    "save": ("checkpoint_manager_blocking_start_time", "checkpoint_manager_blocking_duration_secs"),
    "restore": ("checkpoint_manager_start_time", "checkpoint_manager_duration_secs"),
    "emergency_restore": ("checkpoint_manager_start_time", "checkpoint_manager_duration_secs"),
}
# Epoch seconds the spec's times may take (2000-01-01 .. 2099-12-31, as `mpg run` checks).
_EARLIEST, _LATEST = 946_684_800.0, 4_102_444_799.0

_EVENT_SCHEMA = {
    "file": pl.String,
    "line": pl.Int64,
    "job_id": pl.String,
    "event": pl.String,  # job_start, job_end, step, <kind>_start, <kind>_end, save, restore
    "custom_type": pl.String,
    "t": pl.Int64,  # microseconds since the epoch
    "t_end": pl.Int64,  # a checkpoint record's end; else t
    "step": pl.Int64,
}


class _RecordError(ValueError):
    """Why one record cannot be used: its quarantine reason."""


def _seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _RecordError(f"not a number: {name}")
    return float(value)


def _instant(value: object, name: str) -> int:
    t = _seconds(value, name)
    if not _EARLIEST <= t <= _LATEST:
        raise _RecordError(f"out of range: {name}")
    return round(t * 1e6)


def _step(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _RecordError("not a step number: step")
    return value


def _event(payload: dict) -> dict:
    """One record's event, or _RecordError."""
    if "event_type" in payload:
        if payload["event_type"] not in _ORBAX:
            raise _RecordError("unknown checkpoint event_type")
        start_field, duration_field = _ORBAX[payload["event_type"]]
        if payload.get(start_field) is None:
            raise _RecordError(f"missing field: {start_field}")
        start = _instant(payload[start_field], start_field)
        duration = _seconds(payload.get(duration_field), duration_field)
        if duration < 0:
            raise _RecordError(f"out of range: {duration_field}")
        return {
            "event": "save" if payload["event_type"] == "save" else "restore",
            "t": start,
            "t_end": start + round(duration * 1e6),
            "step": _step(payload.get("step")),
        }
    if "step_start_time" in payload:
        t = _instant(payload["step_start_time"], "step_start_time")
        return {"event": "step", "t": t, "step": _step(payload.get("step_count"))}
    for field, event in (("job_start_time", "job_start"), ("job_end_time", "job_end")):
        if field in payload:
            return {"event": event, "t": _instant(payload[field], field)}
    for kind, (start_field, end_field) in PAIRS.items():
        for field, end in ((start_field, "start"), (end_field, "end")):
            if field in payload:
                custom = str(payload.get("custom_badput_event_type", "unknown")).upper()
                return {
                    "event": f"{kind}_{end}",
                    "t": _instant(payload[field], field),
                    "custom_type": custom if kind == "custom" else None,
                }
    raise _RecordError("not a goodput or checkpoint record")


def _payload(raw: str) -> dict:
    try:
        payload = json.loads(raw)
    except ValueError:
        raise _RecordError("invalid JSON") from None
    if isinstance(payload, dict) and isinstance(payload.get("jsonPayload"), dict):
        payload = payload["jsonPayload"]  # a Cloud Logging export entry
    if not isinstance(payload, dict):
        raise _RecordError("not a JSON object")
    name = payload.get("job_name")
    if name is not None and (not isinstance(name, str) or not name):
        raise _RecordError("not a job name: job_name")
    return payload


def _records(path: Path) -> list[tuple[int, str]]:
    """A file's records with their line numbers: its non-blank lines, or, for a JSON array (what
    `gcloud logging read --format=json` writes), its elements numbered from 1."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("["):
        try:
            entries = json.loads(text)
        except ValueError:
            entries = None  # not one array after all: each line is judged on its own
        if isinstance(entries, list):
            return [(i, json.dumps(e)) for i, e in enumerate(entries, start=1)]
    return [(n, raw) for n, raw in enumerate(text.splitlines(), start=1) if raw.strip()]


def _read_file(path: Path, job_id: str | None) -> tuple[int, list[dict], list[dict]]:
    """One file's records (parsed one by one: a record is the unit of quarantine) as events.

    A record's job is its `job_name`, else `--job-id`, else the one job_name of its file:
    Orbax's records name no job, and a log holds one job's records as a rule.
    """
    rows: list[dict] = []
    problems: list[dict] = []
    records = _records(path)
    for number, raw in records:
        where = {"file": str(path), "line": number, "raw": raw}
        try:
            payload = _payload(raw)
            rows.append({**where, "job_id": payload.get("job_name") or job_id, **_event(payload)})
        except _RecordError as problem:
            problems.append({**where, "reason": str(problem)})
    names = {r["job_id"] for r in rows if r["job_id"] is not None}
    for r in rows:
        if r["job_id"] is None and len(names) == 1:
            r["job_id"] = next(iter(names))
    problems += [
        {**{k: r[k] for k in ("file", "line", "raw")}, "reason": "no job: give --job-id"}
        for r in rows
        if r["job_id"] is None
    ]
    return len(records), [r for r in rows if r["job_id"] is not None], problems


def read_events(paths: list[Path], job_id: str | None) -> tuple[int, pl.DataFrame, pl.DataFrame]:
    """Every non-blank line of every file: (lines read, events, quarantine rows)."""
    read, events, problems = 0, [], []
    for path in paths:
        n, rows, bad = _read_file(path, job_id)
        read, events, problems = read + n, events + rows, problems + bad
    frame = pl.DataFrame(events, schema={**_EVENT_SCHEMA, "raw": pl.String})
    frame = frame.with_columns(pl.col("t_end").fill_null(pl.col("t")))
    return read, frame, pl.DataFrame(problems, schema=QUARANTINE_SCHEMA)
