"""The spec's worked examples, reproduced row for row through the real CLI into a real DuckDB file.

Chip-seconds in the expected CSVs are exact; ratios are given to 12 significant digits.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from tests.conftest import read_expected, run_mpg

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
RATIOS = {"sg", "rg", "pg", "mpg", "pg_coverage"}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each example run once through `mpg run`; the database path per example."""
    out = {}
    for name in ("tiny", "edges"):
        target = tmp_path_factory.mktemp(name)
        result = run_mpg(
            "run",
            "--traces",
            Path(__file__).parent / "fixtures/spec_examples" / name,
            "--out",
            target,
        )
        assert result.returncode == 0, result.stderr
        out[name] = target / "mpg.duckdb"
    return out


def _published_rows(database: Path, table: str) -> dict[tuple, dict]:
    with duckdb.connect(str(database), read_only=True) as con:
        rows = con.table(table).to_arrow_table().to_pylist()
    return {tuple(_text(r[k]) for k in KEYS[table]): r for r in rows}


def _text(value: object) -> str | None:
    return value.isoformat() if isinstance(value, dt.date) else value  # type: ignore[return-value]


@pytest.mark.parametrize("table", sorted(KEYS))
@pytest.mark.parametrize("example", ["tiny", "edges"])
def test_example_table_matches_row_for_row(
    published: dict[str, Path], example: str, table: str
) -> None:
    expected = read_expected(
        Path(__file__).parent / "fixtures/spec_examples" / example / "expected" / f"{table}.csv"
    )
    actual = _published_rows(published[example], table)
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
                rel = 1e-11 if column in RATIOS else 1e-12
                assert got[column] == pytest.approx(float(want), rel=rel), (row, column)


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
