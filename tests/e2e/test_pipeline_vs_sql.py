"""The whole pipeline, through the real CLI, against an independent route to the same numbers: the
hand-written DuckDB query sql/crosscheck/job_day_chip_time.sql over the same raw trace files."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from mpg.simulate import simulate
from tests.support.cli import run_mpg
from tests.support.crosscheck import crosscheck_job_days

CATEGORIES = (
    "lost_progress", "checkpoint_save", "checkpoint_restore", "compile", "init", "data_wait",
    "runtime_idle", "scheduling",
)  # fmt: skip


@pytest.mark.parametrize(("seed", "buckets"), [(3, 1), (11, 5)])
def test_published_tables_match_the_crosscheck_query(
    tmp_path: Path, seed: int, buckets: int
) -> None:
    simulate(seed=seed, jobs=30, days=2, out=tmp_path / "traces")
    result = run_mpg(
        "run", "--traces", tmp_path / "traces", "--out", tmp_path / "out", "--buckets", str(buckets)
    )
    assert result.returncode == 0, result.stderr
    with duckdb.connect() as con:
        expected = crosscheck_job_days(con, str(tmp_path / "traces")).to_pylist()
    with duckdb.connect(str(tmp_path / "out/mpg.duckdb"), read_only=True) as con:
        job_days = {
            (r[0], r[1]): r[2:]
            for r in con.execute(
                "select day, job_id, wanted_chip_s, all_allocated_chip_s, productive_chip_s"
                " from job_day_goodput"
            ).fetchall()
        }
        ledger = {
            (r[0], r[1], r[2]): r[3]
            for r in con.execute(
                "select day, job_id, category, chip_s from chip_time_ledger"
            ).fetchall()
        }
    assert len(job_days) == len(expected) > 0
    for row in expected:
        key = (row["day"], row["job_id"])
        got = job_days[key]
        want = (row["wanted_chip_s"], row["all_allocated_chip_s"], row["productive_chip_s"])
        assert got == pytest.approx(want, rel=1e-9)
        for category in CATEGORIES:
            assert ledger.get((*key, category), 0.0) == pytest.approx(
                row[f"{category}_chip_s"], rel=1e-9
            )
