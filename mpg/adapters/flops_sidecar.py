"""The FLOPs sidecar of a PyTorch profiler trace: what the trace cannot say, written beside it at
capture time.

A Chrome trace exported by `torch.profiler` carries no FLOPs, even with `with_flops=True`, and
names no job, chip count or chip generation. The training script counts one step's FLOPs with
`torch.utils.flop_counter.FlopCounterMode` and writes them, with what it knows of the job, to
`NAME.flops.json` beside `NAME.pt.trace.json[.gz]`:

    {"flops_per_step": 1294336, "flops_source": "flop_counter",
     "job_id": "mlp-ddp", "chips": 2, "chip_generation": "gpu-a100"}

`flops_per_step` (required, > 0) is what the counter saw in one training step of the process
that wrote the trace: one rank. The rest is optional; other keys are ignored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpg.core.errors import OptionsError, TraceFileError

_SUFFIXES = (".gz", ".json", ".pt.trace")


@dataclass(frozen=True)
class FlopsSidecar:
    path: Path
    flops_per_step: float
    flops_source: str = "flop_counter"
    job_id: str | None = None
    chips: int | None = None
    chip_generation: str | None = None


def sidecar_path(trace: Path) -> Path:
    """`DIR/NAME.flops.json` for `DIR/NAME.pt.trace.json[.gz]` (or `DIR/NAME.json[.gz]`)."""
    stem = trace.name
    for suffix in _SUFFIXES:
        stem = stem.removesuffix(suffix)
    return trace.with_name(f"{stem}.flops.json")


def _text(doc: dict[str, Any], key: str, path: Path) -> str | None:
    value = doc.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise TraceFileError(f"{path}: {key} must be a non-empty string, not {value!r}")
    return value


def _count(doc: dict[str, Any], key: str, path: Path) -> int | None:
    value = doc.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise TraceFileError(f"{path}: {key} must be an integer > 0, not {value!r}")
    return value


def read_sidecar(path: Path) -> FlopsSidecar:
    try:
        doc = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"{path}: not a FLOPs sidecar (not valid JSON)") from exc
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not isinstance(doc, dict):
        raise TraceFileError(f"{path}: not a FLOPs sidecar (not a JSON object)")
    flops = doc.get("flops_per_step")
    if (
        isinstance(flops, bool)
        or not isinstance(flops, int | float)
        or not math.isfinite(flops)
        or flops <= 0
    ):
        raise TraceFileError(f"{path}: flops_per_step must be a number > 0, not {flops!r}")
    return FlopsSidecar(
        path=path,
        flops_per_step=float(flops),
        flops_source=_text(doc, "flops_source", path) or "flop_counter",
        job_id=_text(doc, "job_id", path),
        chips=_count(doc, "chips", path),
        chip_generation=_text(doc, "chip_generation", path),
    )


def agreed(sidecars: list[FlopsSidecar], field: str) -> Any:
    """The one value of `field` that the sidecars name (None when none does); sidecars of one
    import that name different values are of different jobs or setups, which is an error."""
    values = {getattr(s, field) for s in sidecars} - {None}
    if len(values) > 1:
        named = ", ".join(f"{s.path}: {getattr(s, field)!r}" for s in sidecars)
        raise OptionsError(f"the FLOPs sidecars disagree on {field} ({named})")
    return values.pop() if values else None
