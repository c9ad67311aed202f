"""A simulated fleet cut into pieces, and runs over growing sets of them: shared by the
incremental tests (tests/e2e/test_incremental*.py), which pytest-xdist spreads over workers by file.

The fleet is simulated, then its files are cut into pieces (whole lines), so that each run adds a
few pieces of some days and sources, in an order no scheduler would choose: spans before their
job's submit, an attempt's end days after its steps.
"""

from __future__ import annotations

import gzip
import random
import shutil
from pathlib import Path

import pytest

from mpg.pipelines.options import RunOptions
from mpg.pipelines.result import RunResult
from mpg.pipelines.run import run
from mpg.simulate import simulate
from tests.support.snapshots import PER_RUN, published_state

BUCKETS = 16  # more buckets than a piece's jobs touch: untouched buckets are kept as they were
LINES_PER_PIECE = 1000  # ~16 pieces: each a run of its own, and a recompute after it


def lines_of(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.splitlines(keepends=True)


@pytest.fixture(scope="module")
def pieces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated fleet (with duplicates, malformed lines, restarts) cut into pieces."""
    fleet = tmp_path_factory.mktemp("fleet")
    simulate(seed=5, jobs=14, days=3, out=fleet)
    cut = tmp_path_factory.mktemp("pieces")
    for path in sorted(fleet.glob("*/*.jsonl*")):
        lines = lines_of(path)
        stem = path.name.split(".")[0]
        for k in range(0, len(lines), LINES_PER_PIECE):
            piece = cut / path.parent.name / f"{stem}-{k // LINES_PER_PIECE:03d}.jsonl"
            piece.parent.mkdir(exist_ok=True)
            piece.write_bytes(b"".join(lines[k : k + LINES_PER_PIECE]))
    return cut


def piece_names(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.glob("*/*.jsonl"))


def update(traces: Path, out: Path, *beam_args: str) -> RunResult:
    """An `mpg run` of `traces` into `out` (`beam_args`: Beam's options, or mpg's default)."""
    beam = {"beam_args": beam_args} if beam_args else {}
    return run(RunOptions(traces=str(traces), out=str(out), buckets=BUCKETS, **beam))


def recomputed(traces: Path, tmp: Path) -> dict[str, str]:
    """What one run over `traces` into a fresh folder publishes."""
    out = tmp / f"full-{random.random()}"
    update(traces, out)
    state = published_state(out, skip=PER_RUN)
    shutil.rmtree(out)
    return state


def add(pieces: Path, traces: Path, names: list[str]) -> None:
    for name in names:
        (traces / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pieces / name, traces / name)
