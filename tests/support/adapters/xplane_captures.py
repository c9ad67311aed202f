"""XPlane captures for the xplane adapter's tests: the committed real jax capture
(tests/fixtures/adapters/xplane, made by make_xplane_fixtures.py beside this) with what jax said
of it when it was made, and small captures built with the XPlane schema, as jax writes them."""

from __future__ import annotations

import json
from typing import Any

from mpg.adapters.xplane_cost import program_costs
from mpg.adapters.xplane_proto import HloProto, XSpace
from mpg.adapters.xplane_read import read_capture
from tests.support.files import adapter_fixtures

FIXTURE = adapter_fixtures("xplane")
CAPTURE = FIXTURE / "train.xplane.pb"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
SIDECAR = json.loads((FIXTURE / "cost_analysis.json").read_text(encoding="utf-8"))
START_NS = 1_795_400_000_000_000_000  # 2026-11-23T02:13:20Z
MS = 10**9  # picoseconds


def stat(metadata_id: int, value: Any) -> dict[str, Any]:
    kind = {int: "int64_value", str: "str_value", bytes: "bytes_value"}[type(value)]
    return {"metadata_id": metadata_id, kind: value}


def build_capture(
    steps: list[tuple[Any, int, int]],
    launches: list[tuple[int, int, int]],
    programs: dict[int, bytes],
    *,
    line_ns: int = 0,
    start_ns: int | None = START_NS,
) -> bytes:
    """An xplane as jax writes one: step annotations `(step_num, offset_ps, duration_ps)` on the
    host's python line, op events of launches `(program_id, run_id, offset_ps)` on an executor
    line, each program's HloProto in the metadata plane, and the capture's wall-clock start."""
    host = {
        "name": "/host:CPU",
        "stat_metadata": [
            {"key": k, "value": {"id": k, "name": n}}
            for k, n in ((1, "step_num"), (2, "program_id"), (3, "run_id"))
        ],
        "event_metadata": [{"key": 1, "value": {"id": 1, "name": "train"}}],
        "lines": [
            {
                "name": "python",
                "timestamp_ns": line_ns,
                "events": [
                    {"metadata_id": 1, "offset_ps": o, "duration_ps": d, "stats": [stat(1, n)]}
                    for n, o, d in steps
                ],
            },
            {
                "name": "executor",
                "timestamp_ns": line_ns,
                "events": [
                    {"offset_ps": o, "duration_ps": 1000, "stats": [stat(2, p), stat(3, r)]}
                    for p, r, o in launches
                ],
            },
        ],
    }
    metadata = {
        "name": "/host:metadata",
        "stat_metadata": [
            {"key": 1, "value": {"id": 1, "name": "Hlo Proto"}},
            {"key": 2, "value": {"id": 2, "name": "program_id"}},
        ],
        "event_metadata": [
            {
                "key": i,
                "value": {
                    "id": i,
                    "name": f"jit_f({p})",
                    "stats": [stat(1, HloProto(hlo_module=m).SerializeToString()), stat(2, p)],
                },
            }
            for i, (p, m) in enumerate(programs.items(), start=1)
        ],
    }
    planes = [metadata, host]
    if start_ns is not None:
        planes.append(
            {
                "name": "Task Environment",
                "stat_metadata": [{"key": 1, "value": {"id": 1, "name": "profile_start_time"}}],
                "stats": [{"metadata_id": 1, "uint64_value": start_ns}],
            }
        )
    return XSpace(planes=planes).SerializeToString()


def loss_module() -> tuple[bytes, float]:
    """The fixture's `jit_loss` module and its FLOPs per device."""
    capture = read_capture(CAPTURE)
    flops = EXPECTED["programs"]["jit_loss"]["flops"]
    costs = program_costs(dict(capture.programs))
    (program_id,) = costs.filter(costs["flops"] == flops).get_column("program_id").to_list()
    return capture.programs[program_id], flops
