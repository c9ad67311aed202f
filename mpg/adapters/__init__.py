"""Adapters: what fleets and frameworks actually write, converted into the spec's canonical
records by `mpg import FORMAT SRC... --out ROOT`, after which `mpg run --traces ROOT` works
unchanged (docs/adapters/README.md).

Each adapter is a module with `convert(paths, args) -> Conversion`. Its one-line help and the
names of the files it takes from a folder are here, and its options are declared in
`mpg.adapters.arguments`, so that `mpg import --help`, `mpg import FORMAT --help` and a mistyped
option need none of the adapters, which import Polars (and jax, inside `convert`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Adapter:
    """Where a format's adapter is, and its one-line help; its options are declared by the
    function of the same name (the module's last part) in `mpg.adapters.arguments`."""

    module: str
    help: str
    patterns: tuple[str, ...]  # names of the files it takes from a folder

    @property
    def arguments(self) -> str:
        return self.module.rsplit(".", 1)[1]


ADAPTERS: dict[str, Adapter] = {
    "ml-goodput": Adapter(
        "mpg.adapters.ml_goodput",
        "Goodput Measurement API (ml-goodput-measurement) and Orbax checkpoint log records",
        ("*.jsonl", "*.json"),
    ),
    "xplane": Adapter(
        "mpg.adapters.xplane",
        "XLA profiler captures (*.xplane.pb): step spans and profile records with HLO FLOPs",
        ("*.xplane.pb",),
    ),
    "pytorch": Adapter(
        "mpg.adapters.pytorch",
        "PyTorch profiler traces (*.pt.trace.json[.gz]) with FLOPs sidecars",
        ("*.pt.trace.json", "*.pt.trace.json.gz"),
    ),
    "alibaba-gpu-v2023": Adapter(
        "mpg.adapters.alibaba_gpu_v2023",
        "Alibaba GPU cluster trace v2023 pod lists (openb_pod_list_*.csv): pods as jobs (SG, RG)",
        ("openb_pod_list_*.csv",),
    ),
    "philly": Adapter(
        "mpg.adapters.philly",
        "Microsoft Philly job logs (cluster_job_log, or the cleaned jobs.json)",
        ("cluster_job_log", "cluster_job_log.gz", "*.json", "*.json.gz"),
    ),
    "slurm": Adapter(
        "mpg.adapters.slurm",
        "Slurm accounting (sacct --parsable2 output): jobs' queueing and requeues (SG, RG)",
        ("sacct*",),
    ),
    "kubernetes": Adapter(
        "mpg.adapters.kubernetes",
        "Kueue Workloads, their pods, events and JobSet restarts (kubectl -o json, event "
        "exporters): SG and RG per job",
        ("*.json", "*.jsonl", "*.json.gz", "*.jsonl.gz"),
    ),
}
