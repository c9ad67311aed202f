"""The `*_current` views: each metric-versioned table filtered to the version `DIR/mpg.toml`
names (v1 without the file), through the real CLI into a real DuckDB file; and the file's
validation (`mpg.definitions.config`), where a bad file is one line and exit 2 before anything
runs (how
each setting is read: tests/unit/test_config.py and, for prices, power and PUE,
tests/unit/test_costs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.support.cli import run_mpg
from tests.support.files import SPEC_EXAMPLES, read_expected

TINY = SPEC_EXAMPLES / "tiny"
TABLES = ("job_day_goodput", "chip_time_ledger", "goodput_by_slice")
EXPECTED = {"v1": "expected", "v2": "expected-v2"}
BOTH = ("--metric-version", "v1", "--metric-version", "v2")


def _current_rows(database: Path, table: str) -> tuple[set[str], list[dict], list[dict]]:
    """A table's `_current` view: the versions in it, its rows, and the table's rows of those
    versions (both in one order)."""
    with duckdb.connect(str(database), read_only=True) as con:
        view = con.table(f"{table}_current").order("all").to_arrow_table().to_pylist()
        rows = con.table(table).order("all").to_arrow_table().to_pylist()
    versions = {r["metric_version"] for r in view}
    return versions, view, [r for r in rows if r["metric_version"] in versions]


@pytest.mark.parametrize(
    ("config", "flags", "computed"),
    [
        # no mpg.toml: v1 is current, whatever else the run computes
        (None, BOTH, [("v1", 3), ("v2", 3)]),
        # current = "v2" and no flag: the run computes v1 and v2 beside it, the views show v2
        ("v2", (), [("v1", 3), ("v2", 3)]),
    ],
)
def test_current_views_show_the_configured_version(
    tmp_path: Path, config: str | None, flags: tuple[str, ...], computed: list[tuple[str, int]]
) -> None:
    if config is not None:
        tmp_path.joinpath("mpg.toml").write_text(f'[metrics]\ncurrent = "{config}"\n')
    result = run_mpg("run", "--traces", TINY, "--out", tmp_path, *flags)
    assert result.returncode == 0, result.stderr
    database = tmp_path / "mpg.duckdb"
    with duckdb.connect(str(database), read_only=True) as con:
        versions = con.execute(
            "select metric_version, count(*) from job_day_goodput group by all order by all"
        ).fetchall()
    assert versions == computed  # tiny has 3 job-days per version
    current = config or "v1"
    for table in TABLES:
        versions, view, rows = _current_rows(database, table)
        expected = read_expected(TINY / EXPECTED[current] / f"{table}.csv")
        assert versions == {current}
        assert view == rows
        assert len(view) == len(expected)  # tiny: 3 job-days, 18 ledger rows, 23 slices
    explained = run_mpg("explain", "--out", tmp_path, "--job", "serve-b", "--json")
    assert json.loads(explained.stdout)["metric_version"] == current  # explain's default too


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[metrics]\ncurrent = "v9"\n',
            "[metrics] current = 'v9' is not a metric version (known: v1, v2)",
        ),
        (
            "[metrics]\ncurrent = 2\n",
            "[metrics] current = 2 is not a metric version (known: v1, v2)",
        ),
        ('[metrics]\ncurent = "v2"\n', "unknown key [metrics] 'curent' (known: current)"),
        (
            'current = "v2"\n',
            "unknown entry 'current' (known: [metrics] current, [prices], [power], [energy] pue)",
        ),
        (
            "[metrics\n",
            "cannot be read as TOML: Expected ']' at the end of a table declaration "
            "(at line 1, column 9)",
        ),
        (
            '[prices]\n"tpu-v5p" = "cheap"\n',
            "[prices] 'tpu-v5p' = 'cheap' is not a number of USD per chip-hour >= 0",
        ),
    ],
)
def test_a_bad_config_file_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "out" / "mpg.toml"
    config.parent.mkdir()
    config.write_text(text)
    result = run_mpg("run", "--traces", TINY, "--out", config.parent)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"mpg: error: {config}: {message}\n"


def test_a_current_version_the_run_does_not_compute_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mpg.toml").write_text('[metrics]\ncurrent = "v2"\n')
    result = run_mpg("run", "--traces", TINY, "--out", tmp_path, "--metric-version", "v1")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"mpg: error: the current metric version v2 (from {tmp_path / 'mpg.toml'}, v1 without it) "
        "is not among those this run computes (v1): add --metric-version v2\n"
    )
