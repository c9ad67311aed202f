"""A published run for the report's tests: the committed sample fleet plus one hostile job, whose
id and owner are markup that must show as text and never run.

The hostile job wants 1024 chips from 2026-11-21 00:00 to 12:00 UTC, holds them from 06:00 and
never runs a step: 12 288 wanted chip-hours, all lost, the most of any job but train-00018 (whose
29 383 chip-hours of program loss count too). A second job names a framework that is markup, so
the quarantine's reason quotes it; the traces folder's name is markup too (the page names it).

A third job, `RANKED_JOB`, runs 30 steps on 4 ranks (PyTorch-style per-rank spans) on 2026-11-21:
rank 2 is the slowest in 20 of them and rank 0 in the other 10, so the report has stragglers
to draw.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb

from tests.support.cli import run_mpg
from tests.support.files import SAMPLE_TRACES

SAMPLE = SAMPLE_TRACES
HOSTILE_JOB = "<script>alert(1)</script>"
HOSTILE_OWNER = "<img src=x onerror=alert(2)>"
HOSTILE_LOST_CHIP_H = 12.0 * 1024
HOSTILE_FRAMEWORK = "<script>alert(5)</script>"
HOSTILE_TRACES = "traces <b>bold"  # a file name cannot hold a slash

_HOSTILE_EVENTS = [
    {"type": "JOB_SUBMIT", "ts": "2026-11-21T00:00:00Z", "job_id": HOSTILE_JOB,
     "chips_requested": 1024, "chip_generation": "tpu-v5p", "workload_class": "training",
     "framework": "jax", "owner": HOSTILE_OWNER},
    {"type": "TASK_SCHEDULE", "ts": "2026-11-21T06:00:00Z", "job_id": HOSTILE_JOB,
     "task_index": 0, "chips": 1024},
    {"type": "JOB_END", "ts": "2026-11-21T12:00:00Z", "job_id": HOSTILE_JOB, "state": "FAILED"},
    {"type": "JOB_SUBMIT", "ts": "2026-11-21T00:00:00Z", "job_id": "quarantined",
     "chips_requested": 1, "chip_generation": "tpu-v5p", "workload_class": "training",
     "framework": HOSTILE_FRAMEWORK},
]  # fmt: skip


RANKED_JOB = "ranked-train"
RANKED_STEPS, RANKS = 30, 4


def _ranked_spans() -> list[dict]:
    """Steps of 10 s from 01:00 UTC; each rank ends its step 0.1 s x rank apart, the slowest
    (rank 2, or rank 0 every third step) 2 s later."""
    spans = []
    for step in range(RANKED_STEPS):
        slowest = 0 if step % 3 == 2 else 2
        start = 3600 + 12 * step
        for rank in range(RANKS):
            end = start + 10 + 0.1 * rank + (2 if rank == slowest else 0)
            spans.append({
                "job_id": RANKED_JOB, "attempt": 0, "kind": "step", "step": step, "rank": rank,
                "start": _at(start), "end": _at(end),
            })  # fmt: skip
    return spans


def _at(seconds: float) -> str:
    """`seconds` after 2026-11-21 00:00 UTC, as a trace writes it."""
    hours, minutes = int(seconds // 3600), int(seconds % 3600 // 60)
    return f"2026-11-21T{hours:02d}:{minutes:02d}:{seconds % 60:06.3f}Z"


_RANKED_EVENTS = [
    {"type": "JOB_SUBMIT", "ts": "2026-11-21T00:59:00Z", "job_id": RANKED_JOB,
     "chips_requested": 4, "chip_generation": "gpu-h100", "workload_class": "training",
     "framework": "pytorch"},
    {"type": "TASK_SCHEDULE", "ts": "2026-11-21T00:59:30Z", "job_id": RANKED_JOB,
     "task_index": 0, "chips": 4},
    {"type": "JOB_END", "ts": "2026-11-21T01:07:00Z", "job_id": RANKED_JOB, "state": "SUCCEEDED"},
]  # fmt: skip


def published_hostile_fleet(root: Path) -> Path:
    """`mpg run` over the sample fleet and the hostile job; returns the output folder."""
    traces = root / HOSTILE_TRACES
    shutil.copytree(SAMPLE, traces)
    lines = "".join(json.dumps(event) + "\n" for event in _HOSTILE_EVENTS + _RANKED_EVENTS)
    (traces / "scheduler" / "events-hostile.jsonl").write_text(lines, encoding="utf-8")
    spans = "".join(json.dumps(span) + "\n" for span in _ranked_spans())
    (traces / "runtime" / "spans-ranked.jsonl").write_text(spans, encoding="utf-8")
    out = root / "out"
    done = run_mpg("run", "--traces", traces, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def published_rows(out: Path, table: str) -> list[dict]:
    """Every row of a published table or view, as dicts."""
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        cursor = con.execute(f"select * from {table}")  # a fixed name from a test
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def specs_of(page: str) -> dict:
    """The charts' Vega-Lite specs, by chart id, as the page carries them."""
    block = re.search(r'<script type="application/json" id="mpg-specs">(.*?)</script>', page, re.S)
    assert block is not None
    return json.loads(block.group(1))


def datasets_of(spec: dict) -> list[list[dict]]:
    """Every distinct set of rows in a spec (inline `data.values`, or top-level `datasets`), in
    the order first met."""
    found: list[list[dict]] = list(spec.get("datasets", {}).values())

    def walk(node: object) -> None:
        if isinstance(node, dict):
            values = (
                node.get("data", {}).get("values") if isinstance(node.get("data"), dict) else None
            )
            if values is not None and values not in found:
                found.append(values)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def rows_with(spec: dict, *fields: str) -> list[dict]:
    """The one set of rows of `spec` whose rows have all of `fields`."""
    matching = [rows for rows in datasets_of(spec) if rows and all(f in rows[0] for f in fields)]
    assert len(matching) == 1, (fields, len(matching))
    return matching[0]
