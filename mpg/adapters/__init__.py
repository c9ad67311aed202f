"""Adapters: what fleets and frameworks actually write, converted into the spec's canonical
records by `mpg import FORMAT SRC... --out ROOT`, after which `mpg run --traces ROOT` works
unchanged (docs/adapters.md).

Each adapter is a module with `HELP` (one line), `PATTERNS` (file names it takes from a folder),
`add_arguments(parser)` and `convert(paths, args) -> Conversion`. Modules import their heavy
dependencies (jax, for one) inside `convert`, so building the command line stays cheap.
"""

from __future__ import annotations

ADAPTERS: dict[str, str] = {
    "ml-goodput": "mpg.adapters.ml_goodput",
    "xplane": "mpg.adapters.xplane",
    "pytorch": "mpg.adapters.pytorch",
    "alibaba-gpu-v2023": "mpg.adapters.alibaba_gpu_v2023",
    "philly": "mpg.adapters.philly",
    "slurm": "mpg.adapters.slurm",
    "kubernetes": "mpg.adapters.kubernetes",
}
