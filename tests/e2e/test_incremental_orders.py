"""Incremental runs in any order: a fleet fed piece by piece, in random orders and groupings,
always publishes exactly what one run over the same files publishes (the contract of
docs/operations.md). Its own file so that pytest-xdist runs it beside tests/e2e/test_incremental.py.
Every walk ends with the whole fleet: the one run over it (`whole`) is made once, for all of them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.support.incremental import add, piece_names, pieces, recomputed, update
from tests.support.snapshots import PER_RUN, published_state

__all__ = ["pieces"]  # the fixture, imported for pytest


@pytest.fixture(scope="module")
def whole(pieces: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What one run over every piece publishes: where each walk below ends."""
    return recomputed(pieces, tmp_path_factory.mktemp("whole"))


def test_a_fleet_fed_piece_by_piece_equals_one_run_over_it_after_every_step(
    pieces: Path, whole: dict[str, str], tmp_path: Path
) -> None:
    names = piece_names(pieces)
    random.Random(1).shuffle(names)
    traces, out = tmp_path / "traces", tmp_path / "out"
    (traces / "scheduler").mkdir(parents=True)
    step = runs = 0
    while step < len(names):
        batch = names[step : step + 1 + runs % 3]  # one, two or three pieces at a time
        step, runs = step + len(batch), runs + 1
        add(pieces, traces, batch)
        result = update(traces, out)
        assert result.parsed == len(batch)
        expected = whole if step == len(names) else recomputed(traces, tmp_path)
        assert published_state(out, skip=PER_RUN) == expected, step


# Seed 3 on two worker threads (what runs of two buckets' worth of records or more get): the
# same tables, however the threads take blocks and buckets.
THREADS = (
    "--runner=FnApiRunner",
    "--direct_num_workers=2",
    "--direct_running_mode=multi_threading",
)


@pytest.mark.parametrize(("seed", "beam_args"), [(2, ()), (3, THREADS)])
def test_any_order_and_grouping_ends_where_one_run_does(
    seed: int, beam_args: tuple[str, ...], pieces: Path, whole: dict[str, str], tmp_path: Path
) -> None:
    rng = random.Random(seed)
    names = piece_names(pieces)
    rng.shuffle(names)
    traces, out = tmp_path / "traces", tmp_path / "out"
    while names:
        k = rng.randint(1, 6)
        batch, names = names[:k], names[k:]
        add(pieces, traces, batch)
        update(traces, out, *beam_args)
    assert published_state(out, skip=PER_RUN) == whole
