"""The independent reference (tests/support/reference) holds to the spec's worked examples, every
metric version: `expected/` for v1, `expected-v2/` for v2, row for row. (The pipeline against the
reference: tests/e2e/test_reference.py.)"""

from __future__ import annotations

import csv
import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import SPEC_EXAMPLES as EXAMPLES
from tests.support.reference import reference
from tests.support.reference.compare import (
    JOB_DAY_NUMBERS,
    SLICE_NUMBERS,
    differences,
    numbers,
    scalar,
)
from tests.support.reference.model import METRIC_VERSIONS


def read_csv(path: Path) -> list[dict[str, Any]]:
    """An expected CSV: empty cells are NULL, days are dates, numeric cells floats."""
    rows = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            parsed: dict[str, Any] = {}
            for k, v in row.items():
                if v == "":
                    parsed[k] = None
                elif k == "day":
                    parsed[k] = datetime.date.fromisoformat(v)
                elif k.endswith("_s") or k in {"sg", "rg", "pg", "mpg", "pg_coverage"}:
                    parsed[k] = float(v)
                else:
                    parsed[k] = v
            rows.append(parsed)
    return rows


EXPECTED = {"v1": "expected", "v2": "expected-v2"}


@pytest.mark.parametrize("version", METRIC_VERSIONS)
@pytest.mark.parametrize("example", ["tiny", "edges"])
def test_reference_reproduces_spec_example(example: str, version: str) -> None:
    ref = reference(EXAMPLES / example, version)
    expected = EXAMPLES / example / EXPECTED[version]
    job_days = {(r["day"], r["job_id"]): r for r in read_csv(expected / "job_day_goodput.csv")}
    ledger = {
        (r["day"], r["job_id"], r["category"]): r["chip_s"]
        for r in read_csv(expected / "chip_time_ledger.csv")
    }
    slices = {
        (r["day"], r["workload_class"], r["framework"], r["chip_generation"]): r
        for r in read_csv(expected / "goodput_by_slice.csv")
    }
    # The CSVs give ratios to 12 significant digits, chip-seconds exactly.
    assert not differences(ref.job_days, job_days, numbers(JOB_DAY_NUMBERS, 1e-11))
    for key, row in job_days.items():
        ours = ref.job_days[key]
        assert (ours.workload_class, ours.framework, ours.chip_generation) == (
            row["workload_class"],
            row["framework"],
            row["chip_generation"],
        )
        assert ours.chips_requested == int(row["chips_requested"])
    assert not differences(ref.ledger, ledger, scalar)
    assert not differences(ref.slices, slices, numbers(SLICE_NUMBERS, 1e-11))
    assert ref.quarantine == []
