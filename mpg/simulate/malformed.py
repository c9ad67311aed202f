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
from typing import Any

import numpy as np
import polars as pl

ORPHAN_JOB = "orphan-00000"
BAD_TIME = "2026-13-45T00:00:00Z"
_ZONE = re.compile(r"(Z|[+-]\d\d:\d\d)$")

Record = dict[str, Any]


class _Bases:
    """Picks real records to bend, or a stand-in where the fleet has none of that kind."""

    def __init__(self, lines: pl.Series, rng: np.random.Generator) -> None:
        self._lines = lines
        self._rng = rng

    def pick(self, contains: str, stand_in: Record) -> Record:
        found = self._lines.filter(self._lines.str.contains(contains, literal=True))
        if found.is_empty():
            return dict(stand_in)
        return json.loads(found[int(self._rng.integers(found.len()))])


def _dumps(value: object) -> str:
    return json.dumps(value)


def _truncated(record: Record) -> str:
    line = _dumps(record)
    return line[: len(line) // 2]


def _without(record: Record, field: str) -> str:
    return _dumps({k: v for k, v in record.items() if k != field})


def _rfc3339(at: datetime.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _naive(ts: str) -> str:
    """The same time without its zone: not RFC 3339."""
    return _ZONE.sub("", ts)


def scheduler_malformed(lines: pl.Series, rng: np.random.Generator, at: datetime.datetime) -> list[str]:
    """One line of each kind; `at` dates the stand-ins used where the fleet has no such record."""
    bases = _Bases(lines, rng)
    ts = _rfc3339(at)
    submit = bases.pick(
        '"JOB_SUBMIT"',
        {"type": "JOB_SUBMIT", "ts": ts, "job_id": ORPHAN_JOB, "chips_requested": 8,
         "chip_generation": "tpu-v5p", "workload_class": "training", "framework": "jax"},
    )
    task = {"type": "TASK_SCHEDULE", "ts": ts, "job_id": ORPHAN_JOB, "task_index": 0, "chips": 4}
    task = bases.pick('"TASK_SCHEDULE"', task)
    return [
        _truncated(submit),
        _dumps(list(task.values())),
        _without(task, "chips"),
        _dumps({**task, "chips": str(task["chips"])}),
        _dumps({**task, "type": "TASK_MIGRATE"}),
        _dumps({**task, "ts": BAD_TIME}),
        _dumps({**task, "ts": _naive(task["ts"])}),
        _dumps({**submit, "job_id": "stray-00001", "workload_class": "finetuning"}),
        _dumps({**submit, "job_id": "stray-00002", "framework": "mxnet"}),
        _dumps({**submit, "job_id": "stray-00003", "chip_generation": "tpu-v9x"}),
        _dumps({**submit, "job_id": "stray-00004", "chips_requested": 0}),
        _dumps({**task, "job_id": ORPHAN_JOB}),
        _dumps({"type": "JOB_END", "ts": task["ts"], "job_id": ORPHAN_JOB, "state": "FAILED"}),
    ]


def runtime_malformed(lines: pl.Series, rng: np.random.Generator, at: datetime.datetime) -> list[str]:
    """One line of each kind; `at` dates the stand-ins used where the fleet has no such record."""
    bases = _Bases(lines, rng)
    start, end = _rfc3339(at), _rfc3339(at + datetime.timedelta(seconds=30))
    step = {"job_id": ORPHAN_JOB, "attempt": 0, "kind": "step", "start": start, "end": end, "step": 1}
    step = bases.pick('"kind": "step"', step)
    return [
        _truncated(step),
        _dumps(list(step.values())),
        _without(step, "kind"),
        _without(step, "step"),
        _dumps({**step, "attempt": str(step["attempt"])}),
        _dumps({**step, "attempt": -1}),
        _dumps({**step, "start": step["end"], "end": step["start"]}),
        _dumps({**step, "kind": "warmup"}),
        _dumps({**step, "start": BAD_TIME}),
        _dumps({**step, "end": _naive(step["end"])}),
        _dumps({**step, "job_id": ORPHAN_JOB}),
    ]


def profile_malformed(lines: pl.Series, rng: np.random.Generator, at: datetime.datetime) -> list[str]:
    """One line of each kind; `at` dates the stand-ins used where the fleet has no such record."""
    bases = _Bases(lines, rng)
    profile = {"job_id": ORPHAN_JOB, "ts": _rfc3339(at), "step": 1, "step_time_s": 30.0,
               "model_flops": 4.4e16, "chips": 8}
    profile = bases.pick('"step_time_s"', profile)
    return [
        _truncated(profile),
        _dumps(list(profile.values())),
        _without(profile, "model_flops"),
        _dumps({**profile, "chips": str(profile["chips"])}),
        _dumps({**profile, "step_time_s": 0.0}),
        _dumps({**profile, "step_time_s": -profile["step_time_s"]}),
        _dumps({**profile, "ts": BAD_TIME}),
        _dumps({**profile, "job_id": ORPHAN_JOB}),
    ]
