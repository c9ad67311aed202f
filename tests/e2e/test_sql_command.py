"""`mpg sql` on a real `mpg run` of data/sample_traces: the views' rows against an independent
Polars computation over the published Parquet (not the database), the terminal table, the
one-line errors, and the interactive shell driven through its standard input."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import mpg.cli.sql_command
from mpg.cli import main
from tests.support.cli import run_mpg
from tests.support.files import SAMPLE_TRACES

SAMPLE = SAMPLE_TRACES
LOST = (
    "scheduling", "runtime_idle", "lost_progress", "checkpoint_save", "checkpoint_restore",
    "compile", "init", "data_wait", "program_loss", "productive_unprofiled",
)  # fmt: skip


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sql") / "out"
    result = run_mpg("run", "--traces", SAMPLE, "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def parquet(out: Path, table: str) -> pl.DataFrame:
    """A published table's v1 rows, from its Parquet partitions."""
    files = sorted((out / "tables" / table).rglob("*.parquet"))
    return pl.concat([pl.read_parquet(f) for f in files]).filter(pl.col("metric_version") == "v1")


def size_class(chips: int) -> str:
    """The size classes by their definition (8x steps), independently of job_size_classes."""
    for top, label in ((1, "1"), (8, "2-8"), (64, "9-64"), (512, "65-512")):
        if chips <= top:
            return label
    return "513+"


def sql_csv(out: Path, query: str) -> list[dict[str, str]]:
    result = run_mpg("sql", "--out", out, "--csv", query)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_worst_jobs_match_polars_over_the_parquet(out: Path) -> None:
    """Every job, ranked by dollars lost (every ledger category but ideal, chip_time_cost's usd),
    the jobs without a price after the priced ones by chip-hours lost, recomputed in Polars."""
    job_days = parquet(out, "job_day_goodput")
    ledger = parquet(out, "chip_time_ledger")
    costs = parquet(out, "chip_time_cost").filter(pl.col("category") != "ideal")
    dollars = costs.group_by("job_id").agg(
        pl.when(pl.col("usd").is_not_null().any()).then(pl.col("usd").sum()).alias("usd")
    )
    lost = (
        job_days.group_by("job_id")
        .agg(
            pl.col("chips_requested").first(),
            (pl.col("wanted_chip_s").sum() - pl.col("ideal_chip_s").fill_null(0).sum()).alias(
                "lost"
            ),
        )
        .join(
            ledger.pivot("category", index="job_id", values="chip_s", aggregate_function="sum"),
            on="job_id",
        )
        .join(dollars, on="job_id", how="left")
        .sort(
            [pl.col("usd").is_null(), "usd", "lost", "job_id"],
            descending=[False, True, True, False],
        )
    )
    got = sql_csv(out, "select * from worst_jobs")
    assert len(got) == lost.height == 60  # every job of the sample fleet
    for rank, (row, want) in enumerate(zip(got, lost.iter_rows(named=True), strict=True), 1):
        assert (row["rank"], row["job_id"]) == (str(rank), want["job_id"])
        assert row["size_class"] == size_class(want["chips_requested"])
        assert float(row["lost_chip_s"]) == pytest.approx(want["lost"], rel=1e-12)
        if want["usd"] is None:
            assert row["lost_usd"] == ""
        else:
            assert float(row["lost_usd"]) == pytest.approx(want["usd"], rel=1e-9)
        for category in LOST:
            assert float(row[f"{category}_chip_s"]) == pytest.approx(
                want.get(category) or 0.0, rel=1e-12, abs=1e-9
            )


def test_fleet_mpg_by_day_matches_polars_over_the_parquet(out: Path) -> None:
    days = (
        parquet(out, "job_day_goodput")
        .group_by("day")
        .agg(
            pl.col("wanted_chip_s").sum(),
            pl.col("all_allocated_chip_s").sum(),
            pl.col("productive_chip_s").sum(),
            pl.col("ideal_chip_s").sum(),
            pl.col("productive_chip_s").filter(pl.col("pg").is_not_null()).sum().alias("profiled"),
        )
        .sort("day")
    )
    got = sql_csv(out, "select * from fleet_mpg_by_day")
    assert [r["day"] for r in got] == ["2026-11-20", "2026-11-21", "2026-11-22"]
    for row, want in zip(got, days.iter_rows(named=True), strict=True):
        sg = want["all_allocated_chip_s"] / want["wanted_chip_s"]
        rg = want["productive_chip_s"] / want["all_allocated_chip_s"]
        pg = want["ideal_chip_s"] / want["profiled"]
        expected = {"sg": sg, "rg": rg, "pg": pg, "mpg": sg * rg * pg}
        assert {k: float(row[k]) for k in expected} == pytest.approx(expected, rel=1e-12)


def test_size_classes_partition_the_fleet(out: Path) -> None:
    """Per day, the size classes' wanted chip-time adds up to the fleet's, and each class's is
    the sum over its jobs."""
    job_days = parquet(out, "job_day_goodput").with_columns(
        pl.col("chips_requested").map_elements(size_class, return_dtype=pl.String).alias("size")
    )
    want = {
        (str(r["day"]), r["size"]): r["wanted_chip_s"]
        for r in job_days.group_by("day", "size").agg(pl.col("wanted_chip_s").sum()).to_dicts()
    }
    got = sql_csv(
        out,
        "select day, size_class, wanted_chip_s from goodput_by_size_class where size_class "
        "is not null and workload_class is null and framework is null and chip_generation is null",
    )
    assert {(r["day"], r["size_class"]): pytest.approx(float(r["wanted_chip_s"])) for r in got} == (
        want
    )


def test_json_and_the_terminal_table(out: Path) -> None:
    query = "select rank, job_id, lost_chip_s, mpg from worst_jobs order by rank limit 2"
    rows = json.loads(run_mpg("sql", "--out", out, "--json", query).stdout)
    assert [r["rank"] for r in rows] == [1, 2]
    table = run_mpg("sql", "--out", out, query)
    assert table.returncode == 0
    lines = table.stdout.splitlines()
    assert lines[1].split() == ["rank", "job_id", "lost_chip_s", "mpg"]
    for line, row in zip(lines[3:5], rows, strict=True):
        mpg = "NULL" if row["mpg"] is None else f"{row['mpg']:.12g}"
        assert line.split() == [str(row["rank"]), row["job_id"], f"{row['lost_chip_s']:.12g}", mpg]
    assert lines[-1].strip() == "2 rows"


def test_a_string_prints_as_itself_not_as_markup(out: Path) -> None:
    result = run_mpg("sql", "--out", out, "select '[bold red]x[/]' as s")
    assert "[bold red]x[/]" in result.stdout


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("selec 1", 'Parser Error: syntax error at or near "selec"'),
        ("select * from nope", "Catalog Error: Table with name nope does not exist!"),
        ("drop view worst_jobs", "only queries run here, not DROP statements"),
    ],
)
def test_a_bad_query_is_one_line_and_exit_2(out: Path, query: str, reason: str) -> None:
    result = run_mpg("sql", "--out", out, query)
    assert (result.returncode, result.stdout) == (2, "")
    database = out / "mpg.duckdb"
    assert result.stderr == f"mpg: error: query failed on {database}: {reason}\n"


def test_no_database_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_mpg("sql", "--out", tmp_path, "select 1")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"mpg: error: no published tables in {tmp_path}: run mpg run first\n"


def test_the_shell_has_the_views_and_cannot_write(out: Path) -> None:
    """`mpg sql` with no query becomes `duckdb -readonly DIR/mpg.duckdb`; driven through stdin."""
    session = subprocess.run(
        [sys.executable, "-m", "mpg.cli", "sql", "--out", str(out)],
        input=".mode csv\nselect count(*) as jobs from worst_jobs;\ndrop view worst_jobs;\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert session.stdout == "jobs\n60\n"
    assert "read-only mode" in session.stderr


def test_without_a_duckdb_shell_one_line_says_how_to_get_it(
    out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(mpg.cli.sql_command, "duckdb_shell", lambda: None)
    assert main(["sql", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        "mpg: error: the interactive shell is DuckDB's `duckdb` command, which is not "
        'installed: pip install duckdb-cli, or pass a query (mpg sql "SELECT ...")\n'
    )


def test_csv_without_a_query_is_one_line_and_exit_2(out: Path) -> None:
    result = run_mpg("sql", "--out", out, "--csv")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "mpg: error: --csv and --json print a query's rows: give a query\n"
