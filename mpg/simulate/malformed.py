"""Lines the spec says must be quarantined: one of each kind per source, each line unique.

Each is a real record of the fleet bent one way (truncated, a wrong type, a field missing, an
unknown value, an unparseable time, ...), or a record of `ORPHAN_JOB`, whose JOB_SUBMIT never
arrived (the spec's "unknown job"). JOB_SUBMITs with a bad value use fresh job ids (`stray-*`)
with no other records. The lines are extra: the record each was bent from is still delivered
intact, so the fleet's valid data is the same with or without them.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

ORPHAN_JOB = "orphan-00000"
BAD_TIME = "2026-13-45T00:00:00Z"
_ZONE = re.compile(r"(Z|[+-]\d\d:\d\d)$")

Record = dict[str, Any]
Bend = Callable[[Record], str]  # a real record in, a line to quarantine out


class _Bases:
    """Picks real records to bend, or a stand-in where the fleet has none of that kind."""

    def __init__(self, lines: pl.Series, rng: np.random.Generator) -> None:
        self._lines = lines
        self._rng = rng

    def bend(self, contains: str, stand_in: Record, bends: list[Bend]) -> list[str]:
        """One line per bend, each from a freshly picked record whose line holds `contains`."""
        found = self._lines.filter(self._lines.str.contains(contains, literal=True))
        picks = self._rng.integers(found.len(), size=len(bends)) if found.len() else []
        records = [json.loads(found[int(i)]) for i in picks] or [stand_in] * len(bends)
        return [bend(dict(record)) for bend, record in zip(bends, records, strict=True)]


def _rfc3339(at: datetime.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _truncated(record: Record) -> str:
    line = json.dumps(record)
    return line[: len(line) // 2]


def _as_array(record: Record) -> str:
    return json.dumps(list(record.values()))


def _without(name: str) -> Bend:
    return lambda r: json.dumps({k: v for k, v in r.items() if k != name})


def _with(**changes: object) -> Bend:
    return lambda r: json.dumps({**r, **changes})


def _as_string(name: str) -> Bend:
    return lambda r: json.dumps({**r, name: str(r[name])})


def _no_zone(name: str) -> Bend:
    """The same time without its zone: not RFC 3339."""
    return lambda r: json.dumps({**r, name: _ZONE.sub("", r[name])})


def _swapped(a: str, b: str) -> Bend:
    return lambda r: json.dumps({**r, a: r[b], b: r[a]})


def _negated(name: str) -> Bend:
    return lambda r: json.dumps({**r, name: -r[name]})


def _orphan_end(record: Record) -> str:
    return json.dumps(
        {"type": "JOB_END", "ts": record["ts"], "job_id": ORPHAN_JOB, "state": "FAILED"}
    )


def scheduler_malformed(
    lines: pl.Series, rng: np.random.Generator, at: datetime.datetime
) -> list[str]:
    """One line of each kind; `at` dates the stand-ins used where the fleet has no such record."""
    bases = _Bases(lines, rng)
    ts = _rfc3339(at)
    task = {"type": "TASK_SCHEDULE", "ts": ts, "job_id": ORPHAN_JOB, "task_index": 0, "chips": 4}
    submit = {
        "type": "JOB_SUBMIT",
        "ts": ts,
        "job_id": ORPHAN_JOB,
        "chips_requested": 8,
        "chip_generation": "tpu-v5p",
        "workload_class": "training",
        "framework": "jax",
    }
    return [
        *bases.bend(
            '"TASK_SCHEDULE"',
            task,
            [
                _as_array,
                _without("chips"),
                _as_string("chips"),
                _with(type="TASK_MIGRATE"),
                _with(ts=BAD_TIME),
                _no_zone("ts"),
                _with(job_id=ORPHAN_JOB),
                _orphan_end,
            ],
        ),
        *bases.bend(
            '"JOB_SUBMIT"',
            submit,
            [
                _truncated,
                _with(job_id="stray-00001", workload_class="finetuning"),
                _with(job_id="stray-00002", framework="mxnet"),
                _with(job_id="stray-00003", chip_generation="tpu-v9x"),
                _with(job_id="stray-00004", chips_requested=0),
            ],
        ),
    ]


def runtime_malformed(
    lines: pl.Series, rng: np.random.Generator, at: datetime.datetime
) -> list[str]:
    """One line of each kind; `at` dates the stand-ins used where the fleet has no such record."""
    step = {
        "job_id": ORPHAN_JOB,
        "attempt": 0,
        "kind": "step",
        "start": _rfc3339(at),
        "end": _rfc3339(at + datetime.timedelta(seconds=30)),
        "step": 1,
    }
    return _Bases(lines, rng).bend(
        '"kind": "step"',
        step,
        [
            _truncated,
            _as_array,
            _without("kind"),
            _without("step"),
            _as_string("attempt"),
            _with(attempt=-1),
            _swapped("start", "end"),
            _with(kind="warmup"),
            _with(start=BAD_TIME),
            _no_zone("end"),
            _with(job_id=ORPHAN_JOB),
        ],
    )


def profile_malformed(
    lines: pl.Series, rng: np.random.Generator, at: datetime.datetime
) -> list[str]:
    """One line of each kind; `at` dates the stand-ins used where the fleet has no such record."""
    profile = {
        "job_id": ORPHAN_JOB,
        "ts": _rfc3339(at),
        "step": 1,
        "step_time_s": 30.0,
        "model_flops": 4.4e16,
        "chips": 8,
    }
    return _Bases(lines, rng).bend(
        '"step_time_s"',
        profile,
        [
            _truncated,
            _as_array,
            _without("model_flops"),
            _as_string("chips"),
            _with(step_time_s=0.0),
            _negated("step_time_s"),
            _with(ts=BAD_TIME),
            _with(job_id=ORPHAN_JOB),
        ],
    )
