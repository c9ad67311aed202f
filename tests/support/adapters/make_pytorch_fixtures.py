"""Regenerates tests/fixtures/adapters/pytorch/: real PyTorch profiler traces of a tiny MLP trained
on the CPU, each with the FLOPs sidecar that `mpg import pytorch` reads (docs/adapters/pytorch.md).

The exported Chrome trace carries no FLOPs, even with `with_flops=True` (NOTES.md), so the FLOPs
of one training step are counted at capture time by `torch.utils.flop_counter.FlopCounterMode`,
on a step run before profiling starts (the counter is a dispatch mode: inside the profiled
steps it would distort their times).

torch is no dependency of mpg: run this with a scratch venv that has torch 2.13.0, CPU build
(that exact pin; a looser one pulls gigabytes of CUDA packages):

    python3.11 -m venv /tmp/torch && /tmp/torch/bin/pip install torch==2.13.0
    /tmp/torch/bin/python tests/support/adapters/make_pytorch_fixtures.py

It writes
- `single/mlp.pt.trace.json.gz` and `single/mlp.flops.json`: one process, a gzipped trace;
- `ddp/worker{0,1}.pt.trace.json` and `ddp/worker{0,1}.flops.json`: two processes training one
  DistributedDataParallel model over gloo, on this machine's loopback interface only.
Each profiles 5 steps with `schedule(wait=1, warmup=1, active=3)`: ProfilerStep#2 to #4.

With `--cuda`, on a machine with an NVIDIA GPU and the torch it has, it writes only
`cuda/mlp.pt.trace.json.gz` and `cuda/mlp.flops.json`: the same MLP on the GPU, profiling CPU
and CUDA activity, so the trace also has each step's device-side `gpu_user_annotation` copy.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.flop_counter import FlopCounterMode

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "adapters" / "pytorch"
BATCH, FEATURES, HIDDEN, CLASSES = 32, 64, 128, 10
STEPS = 5  # wait 1 + warmup 1 + active 3


def _model() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES)
    )


def _train_step(
    model: torch.nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor
) -> float:
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()  # as a training loop logs it; on a GPU, waits for the step's kernels


def _capture(
    name: str, job_id: str, chips: int, rank: int = 0, *, gz: bool = False, device: str = "cpu"
) -> None:
    """Count one step's FLOPs on the bare model, then train STEPS steps under the profiler and
    export the trace as `<name>.pt.trace.json[.gz]` in the working folder (so its `traceName`
    holds no local path; torch's own .gz export would name a temporary file there)."""
    torch.manual_seed(rank)
    x = torch.randn(BATCH, FEATURES, device=device)
    y = torch.randint(0, CLASSES, (BATCH,), device=device)
    model = _model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with FlopCounterMode(display=False) as counter:
        _train_step(model, opt, x, y)
    sidecar = {
        "flops_per_step": counter.get_total_flops(),
        "flops_source": "flop_counter",
        "job_id": job_id,
        "chips": chips,
        "torch_version": torch.__version__,
    }
    Path(f"{name}.flops.json").write_text(json.dumps(sidecar, indent=2) + "\n")
    trace = Path(f"{name}.pt.trace.json")
    if dist.is_initialized():
        model = DistributedDataParallel(model)  # broadcasts rank 0's weights to every rank
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with profile(
        activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else []),
        schedule=schedule(wait=1, warmup=1, active=STEPS - 2),
        on_trace_ready=lambda prof: prof.export_chrome_trace(trace.name),
        record_shapes=False,
    ) as prof:
        for _ in range(STEPS):
            _train_step(model, opt, x, y)
            prof.step()
    if gz:
        with trace.open("rb") as plain, gzip.GzipFile(f"{trace}.gz", "wb", mtime=0) as packed:
            shutil.copyfileobj(plain, packed)
        trace.unlink()


def _ddp_worker(rank: int, world: int, rendezvous: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
    try:
        _capture(f"worker{rank}", "mlp-ddp", world, rank)
    finally:
        dist.destroy_process_group()


def main() -> int:
    torch.set_num_threads(1)
    if sys.argv[1:] == ["--cuda"]:
        (OUT / "cuda").mkdir(parents=True, exist_ok=True)
        os.chdir(OUT / "cuda")
        _capture("mlp", "mlp-cuda", 1, gz=True, device="cuda")
        return 0
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # ranks talk over loopback, nowhere else
    for folder in ("single", "ddp"):
        (OUT / folder).mkdir(parents=True, exist_ok=True)
    os.chdir(OUT / "single")
    _capture("mlp", "mlp-single", 1, gz=True)
    os.chdir(OUT / "ddp")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_ddp_worker, args=(2, str(Path(tmp) / "rendezvous")), nprocs=2)
    for path in sorted(OUT.rglob("*.json*")):
        print(f"{path.relative_to(OUT)}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
