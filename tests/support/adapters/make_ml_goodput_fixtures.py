"""Regenerates tests/fixtures/adapters/ml-goodput/: each scenario's records, logged through the
real ml-goodput-measurement 0.2.3 recorder, and the package's calculator figures for them.

    .venv/bin/python tests/support/adapters/make_ml_goodput_fixtures.py

Deterministic: every time is given to the recorder explicitly (its backfill arguments).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.adapters.ml_goodput_scenarios import write_fixtures

if __name__ == "__main__":
    write_fixtures(Path(__file__).resolve().parents[2] / "fixtures" / "adapters" / "ml-goodput")
