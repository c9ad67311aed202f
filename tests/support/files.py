"""Where the files tests read lie: the checkout, the committed fixtures (the spec's worked
examples, copied from the spec, since the project must not read ../shared at test time; each
adapter's inputs), the committed sample fleet, and how an expected-output CSV is read. Every test
names these rather than walking up from its own file, so moving a test file breaks no path."""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SPEC_EXAMPLES = FIXTURES / "spec_examples"
SAMPLE_TRACES = ROOT / "data" / "sample_traces"
DOCS = ROOT / "docs"


def adapter_fixtures(folder: str) -> Path:
    """tests/fixtures/adapters/<folder>: one import format's inputs (and its README)."""
    return FIXTURES / "adapters" / folder


def read_expected(path: Path) -> list[dict[str, str | None]]:
    """An expected-output CSV: an empty cell is NULL."""
    with path.open(newline="") as f:
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(f)]
