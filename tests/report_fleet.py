"""A published run for the report's tests: the committed sample fleet plus one hostile job, whose
id and owner are markup that must show as text and never run.

The hostile job wants 1024 chips from 2026-11-21 00:00 to 12:00 UTC, holds them from 06:00 and
never runs a step: 12 288 wanted chip-hours, all lost, the most of any job in the fleet.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.conftest import run_mpg

SAMPLE = Path(__file__).parents[1] / "data" / "sample_traces"
HOSTILE_JOB = "<script>alert(1)</script>"
HOSTILE_OWNER = "<img src=x onerror=alert(2)>"
HOSTILE_LOST_CHIP_H = 12.0 * 1024

_HOSTILE_EVENTS = [
    {"type": "JOB_SUBMIT", "ts": "2026-11-21T00:00:00Z", "job_id": HOSTILE_JOB,
     "chips_requested": 1024, "chip_generation": "tpu-v5p", "workload_class": "training",
     "framework": "jax", "owner": HOSTILE_OWNER},
    {"type": "TASK_SCHEDULE", "ts": "2026-11-21T06:00:00Z", "job_id": HOSTILE_JOB,
     "task_index": 0, "chips": 1024},
    {"type": "JOB_END", "ts": "2026-11-21T12:00:00Z", "job_id": HOSTILE_JOB, "state": "FAILED"},
]  # fmt: skip


def published_hostile_fleet(root: Path) -> Path:
    """`mpg run` over the sample fleet and the hostile job; returns the output folder."""
    traces = root / "traces"
    shutil.copytree(SAMPLE, traces)
    lines = "".join(json.dumps(event) + "\n" for event in _HOSTILE_EVENTS)
    (traces / "scheduler" / "events-hostile.jsonl").write_text(lines, encoding="utf-8")
    out = root / "out"
    done = run_mpg("run", "--traces", traces, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def specs_of(page: str) -> dict:
    """The charts' Vega-Lite specs, by chart id, as the page carries them."""
    block = re.search(r'<script type="application/json" id="mpg-specs">(.*?)</script>', page, re.S)
    assert block is not None
    return json.loads(block.group(1))
