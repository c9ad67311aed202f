"""FLOPs and bytes of one step on one device: XLA's cost analysis of the compiled HLO modules an
xplane embeds, or a cost-analysis sidecar the user wrote.

XLA's cost analysis is what `jax.jit(f).lower(...).compile().cost_analysis()` reports; run here
on the module taken from the capture, it gives the same numbers (the tests check that). jaxlib
exposes it as `hlo_module_cost_analysis(client, module)`, which `Lowered.cost_analysis` itself
calls; it is not public API, so the version it was checked on is pinned (the `xla` extra) and a
jax without it is a one-line error. Any backend's client analyses any module: the CPU client,
which every jaxlib has, is used, whichever accelerator the capture came from.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mpg.core.errors import OptionsError

COST_SCHEMA = {
    "program_id": pl.Int64,
    "flops": pl.Float64,
    "bytes_accessed": pl.Float64,
    "problem": pl.String,  # why this program's cost is unknown; null when known
}
NO_JAX = (
    "counting FLOPs from an xplane's HLO needs jax (pip install 'mpg-fleet-goodput[xla]'); "
    "or give --cost-analysis FILE"
)


@dataclass(frozen=True)
class StepCost:
    """One step's cost on one device, and where the count came from."""

    flops: float
    bytes_accessed: float | None
    flops_source: str


def program_costs(programs: dict[int, bytes | None]) -> pl.DataFrame:
    """COST_SCHEMA, one row per program id: its module's cost analysis (a cost the analysis
    leaves out is zero: it lists only what the module has), or why there is none."""
    try:
        import jax.extend.backend
        from jax._src.lib import _jax, xla_client
    except ImportError as exc:
        raise OptionsError(NO_JAX) from exc
    if not hasattr(_jax, "hlo_module_cost_analysis"):
        raise OptionsError(
            f"jax {jax.__version__} has no hlo_module_cost_analysis (checked on jax 0.10.2); "
            "give --cost-analysis FILE"
        )
    client = jax.extend.backend.get_backend("cpu")
    rows = []
    for program_id, module in sorted(programs.items()):
        if module is None:
            rows.append((program_id, None, None, f"program {program_id} has no HLO module in it"))
            continue
        try:
            hlo = xla_client.XlaComputation(module).as_hlo_module()
            cost = _jax.hlo_module_cost_analysis(client, hlo)
        except _jax.JaxRuntimeError:
            rows.append((program_id, None, None, f"XLA cannot read program {program_id}'s HLO"))
            continue
        rows.append((program_id, cost.get("flops", 0.0), cost.get("bytes accessed", 0.0), None))
    return pl.DataFrame(rows, schema=COST_SCHEMA, orient="row")


def read_cost_sidecar(path: Path) -> StepCost:
    """A cost-analysis JSON: the object `compile().cost_analysis()` returns for one step's
    program, per device (`{"flops": ..., "bytes accessed": ...}`, or a list holding one, as older
    jax returned), with `flops_source` optional (default `cost_analysis`)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OptionsError(f"--cost-analysis {path}: not a readable JSON file: {exc}") from exc
    if isinstance(doc, list) and len(doc) == 1:
        doc = doc[0]
    if not isinstance(doc, dict):
        raise OptionsError(f"--cost-analysis {path}: not a JSON object")
    flops, moved, source = doc.get("flops"), doc.get("bytes accessed"), doc.get("flops_source")
    if not _count(flops):
        raise OptionsError(f"--cost-analysis {path}: flops must be a number >= 0")
    if moved is not None and not _count(moved):
        raise OptionsError(f"--cost-analysis {path}: 'bytes accessed' must be a number >= 0")
    if source is not None and not (isinstance(source, str) and source):
        raise OptionsError(f"--cost-analysis {path}: flops_source must be a string")
    return StepCost(
        float(flops), None if moved is None else float(moved), source or "cost_analysis"
    )


def _count(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )
