"""Shared fixtures: the spec's worked examples (copied from the spec into tests/fixtures, since
the project must not read ../shared at test time), a helper that runs the real `mpg` CLI, and a
local BigQuery emulator (started once, by the first test that asks for it)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bigquery_emulator import Emulator, running_emulator

FIXTURES = Path(__file__).parent / "fixtures"
SPEC_EXAMPLES = FIXTURES / "spec_examples"

# Commands show no progress in tests, session fixtures' runs included: stderr holds only what
# tests assert. tests/test_progress.py asks for it (`env=` below, or its own reporter).
os.environ["MPG_PROGRESS"] = "none"


def run_mpg(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed CLI in a subprocess, exactly as a user would (`env` adds variables)."""
    return subprocess.run(
        [sys.executable, "-m", "mpg.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


def read_expected(path: Path) -> list[dict[str, str | None]]:
    """An expected-output CSV: an empty cell is NULL."""
    with path.open(newline="") as f:
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(f)]


@pytest.fixture(params=["tiny", "edges"])
def spec_example(request: pytest.FixtureRequest) -> Path:
    return SPEC_EXAMPLES / request.param


@pytest.fixture(scope="session")
def bigquery_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with running_emulator(tmp_path_factory.mktemp("bqemulator")) as emulator:
        yield emulator
