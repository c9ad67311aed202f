"""The committed PyTorch profiler traces (tests/fixtures/adapters/pytorch, made by
make_pytorch_fixtures.py beside this) and an independent reading of their steps: the host-side
ProfilerStep events' times straight from the JSON, not through the adapter."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tests.support.files import adapter_fixtures

PYTORCH = adapter_fixtures("pytorch")
SINGLE = PYTORCH / "single" / "mlp.pt.trace.json.gz"
CUDA = PYTORCH / "cuda" / "mlp.pt.trace.json.gz"  # also has each step's gpu_user_annotation copy
RANKS = (PYTORCH / "ddp" / "worker0.pt.trace.json", PYTORCH / "ddp" / "worker1.pt.trace.json")


def trace_doc(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def host_steps(path: Path) -> dict[int, tuple[int, int, float]]:
    """step -> (start ns, end ns, dur us) of the trace's host-side ProfilerStep events."""
    doc = trace_doc(path)
    base = doc.get("baseTimeNanoseconds", 0)
    steps = {}
    for e in doc["traceEvents"]:
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            start = base + round(e["ts"] * 1000)
            steps[int(e["name"].split("#")[1])] = (start, start + round(e["dur"] * 1000), e["dur"])
    return steps
