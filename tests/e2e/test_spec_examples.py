"""The spec's worked examples, reproduced row for row through the real CLI into a real DuckDB file.

One run computes both metric versions; its v1 rows must be `expected/`, its v2 rows
`expected-v2/`. The CSVs write every number to 12 significant digits (chip-seconds are exact
where that many digits hold them: v2's ideal time of serve-b, 13200 x 67.16417910447761.../300,
does not fit), so each published number must round to the figure written.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import duckdb
import pytest

from tests.support.cli import run_mpg
from tests.support.files import SPEC_EXAMPLES, read_expected

KEYS = {
    "job_day_goodput": ("day", "job_id", "metric_version"),
    "chip_time_ledger": ("day", "job_id", "metric_version", "category"),
    "goodput_by_slice": ("day", "metric_version", "workload_class", "framework", "chip_generation"),
}
TEXT = {
    "day",
    "job_id",
    "metric_version",
    "category",
    "workload_class",
    "framework",
    "chip_generation",
}
EXPECTED = {"v1": "expected", "v2": "expected-v2"}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each example run once through `mpg run`; the database path per example."""
    out = {}
    for name in ("tiny", "edges"):
        target = tmp_path_factory.mktemp(name)
        result = run_mpg(
            "run",
            "--traces",
            SPEC_EXAMPLES / name,
            "--out",
            target,
            *(arg for version in EXPECTED for arg in ("--metric-version", version)),
        )
        assert result.returncode == 0, result.stderr
        out[name] = target / "mpg.duckdb"
    return out


def _published_rows(database: Path, table: str, version: str) -> dict[tuple, dict]:
    with duckdb.connect(str(database), read_only=True) as con:
        rows = con.table(table).to_arrow_table().to_pylist()
    return {
        tuple(_text(r[k]) for k in KEYS[table]): r for r in rows if r["metric_version"] == version
    }


def _text(value: object) -> str | None:
    return value.isoformat() if isinstance(value, dt.date) else value  # type: ignore[return-value]


def _agrees_to_12_digits(want: str, got: float) -> bool:
    """Whether `got` rounds to `want`, a figure written to 12 significant digits (or fewer,
    trailing zeros dropped): within half a unit of its 12th digit, plus float noise."""
    expected = float(want)
    if expected == 0:
        return got == 0
    half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(expected))) - 11)
    return math.isclose(got, expected, rel_tol=1e-15, abs_tol=half_unit)


@pytest.mark.parametrize("table", sorted(KEYS))
@pytest.mark.parametrize("version", sorted(EXPECTED))
@pytest.mark.parametrize("example", ["tiny", "edges"])
def test_example_table_matches_row_for_row(
    published: dict[str, Path], example: str, version: str, table: str
) -> None:
    expected = read_expected(SPEC_EXAMPLES / example / EXPECTED[version] / f"{table}.csv")
    actual = _published_rows(published[example], table, version)
    assert set(actual) == {tuple(e[k] for k in KEYS[table]) for e in expected}
    assert len(actual) == len(expected)
    for row in expected:
        got = actual[tuple(row[k] for k in KEYS[table])]
        for column, want in row.items():
            if column in TEXT:
                continue
            if want is None:
                assert got[column] is None, (row, column)
            else:
                assert _agrees_to_12_digits(want, got[column]), (row, column, got[column])


@pytest.mark.parametrize("example", ["tiny", "edges"])
def test_example_has_no_quarantine_and_counts_add_up(
    published: dict[str, Path], example: str
) -> None:
    with duckdb.connect(str(published[example]), read_only=True) as con:
        assert con.execute("select count(*) from quarantine").fetchone() == (0,)
        counts = con.execute(
            "select source, records_read, accepted, duplicates, quarantined from record_counts"
        ).fetchall()
    for _, read, accepted, duplicates, quarantined in counts:
        assert (read, duplicates, quarantined) == (accepted, 0, 0)


@pytest.mark.parametrize("example", ["tiny", "edges"])
def test_job_days_carry_the_owner_team_and_queue_their_job_submit_names(
    published: dict[str, Path], example: str
) -> None:
    """The examples name owners of some jobs and no team or queue: NULL where the input has none."""
    events = (SPEC_EXAMPLES / example / "scheduler" / "events.jsonl").read_text().splitlines()
    submits = [json.loads(line) for line in events if '"JOB_SUBMIT"' in line]
    named = {s["job_id"]: tuple(s.get(k) for k in ("owner", "team", "queue")) for s in submits}
    with duckdb.connect(str(published[example]), read_only=True) as con:
        rows = con.execute("select job_id, owner, team, queue from job_day_goodput").fetchall()
    # each job-day of a job says what its JOB_SUBMIT says, and every job has job-days
    assert set(rows) == {(job, *attributes) for job, attributes in named.items()}
