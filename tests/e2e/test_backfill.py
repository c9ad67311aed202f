"""`mpg backfill`: metric v2 over a range of days, from the stored records.

Checked against the independent oracle (tests/support/reference, v2 written from the spec's
formula, with exact fractions), and exactly against a run that computes v1 and v2 from the raw
logs; chunked backfills resume after a kill and do nothing when run again; later runs keep
backfilled days up to date; a version backfilled over every day joins the runs without
recomputing history.
"""

from __future__ import annotations

import datetime
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from mpg.pipelines.backfill import BackfillOptions, backfill
from mpg.pipelines.options import RunOptions
from mpg.pipelines.run import run
from mpg.simulate import simulate
from tests.support.reference import reference
from tests.support.reference.compare import (
    JOB_DAY_NUMBERS,
    SLICE_NUMBERS,
    differences,
    numbers,
    scalar,
)
from tests.support.snapshots import PER_RUN, published_state

DAY = datetime.date


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    traces = tmp_path_factory.mktemp("fleet")
    simulate(seed=23, jobs=16, days=4, out=traces)
    return traces


def _days(out: Path) -> list[DAY]:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        rows = con.execute("select distinct day from job_day_goodput order by 1").fetchall()
    return [d for (d,) in rows]


def _rows(out: Path, table: str, where: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        rows = con.execute(f"select * from {table} where {where}", params or []).fetchall()
    return sorted(rows, key=repr)


def _v1_run(fleet: Path, out: Path, *versions: str) -> None:
    run(RunOptions(traces=fleet, out=out, buckets=8, metric_versions=("v1", *versions)))


def _backfill(out: Path, first: DAY, last: DAY, chunk: int = 31) -> list:
    return backfill(BackfillOptions(out, "v2", first, last, chunk_days=chunk))


@pytest.fixture(scope="module")
def backfilled(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DAY, DAY]:
    """The fleet run with v1, then v2 backfilled over its second and third days, a day a chunk."""
    out = tmp_path_factory.mktemp("backfilled") / "out"
    _v1_run(fleet, out)
    days = _days(out)
    first, last = days[1], days[2]
    results = _backfill(out, first, last, chunk=1)
    assert [r.plan for r in results] == [
        f"backfill v2 {first}..{first}",
        f"backfill v2 {last}..{last}",
    ]
    return out, first, last


@pytest.fixture(scope="module")
def both(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fleet run with v1 and v2 at once: what the backfills below are compared to."""
    out = tmp_path_factory.mktemp("both") / "out"
    _v1_run(fleet, out, "v2")
    return out


def _keyed(con: duckdb.DuckDBPyConnection, sql: str, key: tuple[str, ...]) -> dict:
    rows = con.sql(sql).to_arrow_table().to_pylist()
    return {tuple(r[k] for k in key): r for r in rows}


def _published_v2(out: Path) -> tuple[dict, dict, dict]:
    """The v2 rows as the oracle keys them: job-days, ledger chip-seconds, slices."""
    v2 = "where metric_version = 'v2'"
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        job_days = _keyed(con, f"select * from job_day_goodput {v2}", ("day", "job_id"))
        ledger = _keyed(con, f"select * from chip_time_ledger {v2}", ("day", "job_id", "category"))
        slice_key = ("day", "workload_class", "framework", "chip_generation")
        slices = _keyed(con, f"select * from goodput_by_slice {v2}", slice_key)
    return job_days, {k: r["chip_s"] for k, r in ledger.items()}, slices


def test_a_v2_backfill_matches_an_independent_v2_calculation_on_its_days(
    fleet: Path, backfilled: tuple[Path, DAY, DAY]
) -> None:
    out, first, last = backfilled
    oracle = reference(fleet, "v2")

    def within(rows: dict) -> dict:
        return {k: v for k, v in rows.items() if first <= k[0] <= last}

    job_days, ledger, slices = _published_v2(out)
    assert {k[0] for k in job_days} == {first, last}  # v2 rows on the backfilled days only
    assert not differences(within(oracle.job_days), job_days, numbers(JOB_DAY_NUMBERS))
    assert not differences(within(oracle.ledger), ledger, scalar)
    assert not differences(within(oracle.slices), slices, numbers(SLICE_NUMBERS))


def test_a_backfill_equals_a_run_of_both_versions_and_leaves_v1_alone(
    fleet: Path, backfilled: tuple[Path, DAY, DAY], both: Path, tmp_path: Path
) -> None:
    out, first, last = backfilled
    only_v1 = tmp_path / "v1"
    _v1_run(fleet, only_v1)
    for table in ("job_day_goodput", "chip_time_ledger", "goodput_by_slice"):
        v2 = "metric_version = 'v2' and day between ? and ?"
        assert _rows(out, table, v2, [first, last]) == _rows(both, table, v2, [first, last])
        v1 = "metric_version = 'v1'"
        assert _rows(out, table, v1) == _rows(only_v1, table, v1)


def test_a_covered_range_is_up_to_date(backfilled: tuple[Path, DAY, DAY]) -> None:
    out, first, last = backfilled
    current = _pointer(out)
    assert _backfill(out, first, last) == []
    assert _pointer(out) == current


def _pointer(out: Path) -> dict:
    """The published snapshot's pointer: its run id and the one it replaced."""
    return json.loads((out / "current.json").read_text())


def test_a_killed_backfill_resumes_with_the_days_not_yet_covered(
    fleet: Path, backfilled: tuple[Path, DAY, DAY], tmp_path: Path
) -> None:
    done, first, last = backfilled
    out = tmp_path / "out"
    _v1_run(fleet, out)
    before = _pointer(out)["run_id"]
    command = [sys.executable, "-m", "mpg.cli", "backfill", "--out", str(out)]
    command += ["--metric-version", "v2", "--from", str(first), "--to", str(last)]
    process = subprocess.Popen([*command, "--chunk-days", "1"], stderr=subprocess.DEVNULL)
    while process.poll() is None and _pointer(out)["run_id"] == before:
        time.sleep(0.005)  # until the first chunk is published
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert _pointer(out)["previous"] == before  # the first day, published; the second, not
    resumed = subprocess.run(command, capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert f"backfill v2 {last}..{last}" in resumed.stdout
    assert f"backfill v2 {first}..{first}" not in resumed.stdout
    assert published_state(out, skip=PER_RUN) == published_state(done, skip=PER_RUN)


def test_later_runs_keep_the_backfilled_days_up_to_date(
    fleet: Path, backfilled: tuple[Path, DAY, DAY], both: Path, tmp_path: Path
) -> None:
    """A late file restates jobs on the backfilled days: the next run recomputes their v2 rows
    there too, and writes none outside the backfilled days."""
    _, first, last = backfilled
    early = tmp_path / "early"
    shutil.copytree(fleet, early)
    runtime = sorted((early / "runtime").glob("*.jsonl*"))
    held = runtime[-1]
    held.unlink()
    out = tmp_path / "out"
    _v1_run(early, out)
    _backfill(out, first, last)
    shutil.copy(fleet / "runtime" / held.name, early / "runtime" / held.name)
    _v1_run(early, out)
    v2 = "metric_version = 'v2' and day between ? and ?"
    for table in ("job_day_goodput", "chip_time_ledger"):
        assert _rows(out, table, v2, [first, last]) == _rows(both, table, v2, [first, last])
        outside = "metric_version = 'v2' and day not between ? and ?"
        assert _rows(out, table, outside, [first, last]) == []


def test_a_version_backfilled_over_every_day_joins_the_runs_without_recomputing(
    fleet: Path, both: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _v1_run(fleet, out)
    days = _days(out)
    _backfill(out, days[0], days[-1])
    (out / "mpg.toml").write_text('[metrics]\ncurrent = "v2"\n')
    result = run(
        RunOptions(
            traces=fleet,
            out=out,
            buckets=8,
            metric_versions=("v1", "v2"),
            current_metric_version="v2",
        )
    )
    assert result.plan == "the *_current views change version (v1 -> v2)"
    current = "job_day_goodput_current"
    assert _rows(out, current, "true") == _rows(both, "job_day_goodput", "metric_version = 'v2'")
