"""Captures the xplane adapter's fixture: a tiny JAX training loop on two CPU devices, profiled.

    # needs jax 0.10.2 (the xla extra)
    .venv/bin/python tests/support/adapters/make_xplane_fixtures.py

A two-layer MLP trained with SGD, data-parallel over two host devices (so the compiled step is a
per-device SPMD module, as on a real slice), runs five steps under
`jax.profiler.StepTraceAnnotation("train", step_num=i)`. Each step launches two programs, the
update and a loss for logging, and waits for both, so their executions fall inside the step's
annotation. Both are compiled and run once before the capture, so no step includes compilation;
the capture still embeds every program compiled so far (the initialisers too), which is what the
adapter must choose among. Written to tests/fixtures/adapters/xplane/:

- `train.xplane.pb`: the capture (jax writes it as `plugins/profile/<run>/<host>.xplane.pb`);
- `expected.json`: what the tests check against, computed here by jax's own route
  (`jit(f).lower(...).compile().cost_analysis()`, per device), not from the xplane;
- `cost_analysis.json`: a sidecar for `--cost-analysis`: the unoptimised count
  (`lower(...).cost_analysis()`, of the whole unpartitioned program) per device.

Timings differ from run to run; the FLOPs and the structure do not.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

DEVICES = 2
STEPS = 5
OUT = Path(__file__).resolve().parents[2] / "fixtures" / "adapters" / "xplane"

# Before jax is imported: the CPU backend then has two devices.
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES}"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    hidden = jnp.tanh(x @ params["w1"])
    return jnp.mean((hidden @ params["w2"] - y) ** 2)


@jax.jit
def train_step(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> dict[str, jax.Array]:
    grads = jax.grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)


metrics = jax.jit(loss)


def main() -> None:
    mesh = jax.make_mesh((DEVICES,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
    batch = NamedSharding(mesh, P("data", None))
    replicated = NamedSharding(mesh, P())
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    params = jax.device_put(
        {"w1": jax.random.normal(k1, (16, 32)) * 0.1, "w2": jax.random.normal(k2, (32, 4)) * 0.1},
        replicated,
    )
    x = jax.device_put(jax.random.normal(k3, (64, 16)), batch)
    y = jax.device_put(jnp.tanh(x[:, :4]), batch)

    # Warm-up: compiles both programs (and commits params to their final sharding).
    params = train_step(params, x, y)
    metrics(params, x, y).block_until_ready()

    programs = {"jit_train_step": train_step, "jit_loss": metrics}
    costs = {n: f.lower(params, x, y).compile().cost_analysis() for n, f in programs.items()}
    unoptimised = sum(f.lower(params, x, y).cost_analysis()["flops"] for f in programs.values())

    with tempfile.TemporaryDirectory() as tmp:
        walls = []
        with jax.profiler.trace(tmp):
            for i in range(STEPS):
                before = time.time_ns()
                with jax.profiler.StepTraceAnnotation("train", step_num=i):
                    params = train_step(params, x, y)
                    metrics(params, x, y).block_until_ready()
                walls.append((before, time.time_ns()))
        (captured,) = Path(tmp).glob("plugins/profile/*/*.xplane.pb")
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(captured, OUT / "train.xplane.pb")

    expected = {
        "jax_version": jax.__version__,
        "devices": DEVICES,
        "steps": list(range(STEPS)),
        "programs": {
            name: {"flops": c["flops"], "bytes_accessed": c["bytes accessed"]}
            for name, c in costs.items()
        },
        "flops_per_device_step": sum(c["flops"] for c in costs.values()),
        "bytes_accessed_per_device_step": sum(c["bytes accessed"] for c in costs.values()),
        # Wall clock (time.time_ns) just before entering and just after leaving each step's
        # annotation: each step's span must lie inside its bracket.
        "wall_brackets_ns": walls,
    }
    (OUT / "expected.json").write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")
    sidecar = {"flops": unoptimised / DEVICES, "flops_source": "hlo_unoptimized"}
    (OUT / "cost_analysis.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    size = (OUT / "train.xplane.pb").stat().st_size
    print(f"wrote {OUT} (xplane {size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
