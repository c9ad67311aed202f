"""The expectation suites inside `mpg run`: results published beside the tables, and a failed
output expectation stopping the run with the previous tables still current."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from mpg.core.errors import find_user_error
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.pipelines import publish as publish_module
from mpg.pipelines import run as run_module
from mpg.pipelines.options import RunOptions
from mpg.quality import ValidationFailed, validate_bucket
from mpg.quality.declare import Target
from mpg.quality.gx import GxTargets
from mpg.schemas import VALIDATION_RESULTS
from tests.support.cli import run_mpg
from tests.support.files import SAMPLE_TRACES, SPEC_EXAMPLES
from tests.support.fleet import sample_fleet
from tests.support.snapshots import current_run, published_state

SAMPLE = SAMPLE_TRACES


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "out"
    result = run_mpg("run", "--traces", SAMPLE, "--out", out)
    assert result.returncode == 0, result.stderr
    (out.parent / "stdout.txt").write_text(result.stdout)
    return out


def _published_results(out: Path) -> pa.Table:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        return con.table("validation_results").to_arrow_table().cast(VALIDATION_RESULTS)


def test_source_suite_results_equal_the_suites_run_on_the_whole_sample(sample_out: Path) -> None:
    """The run checks its changed jobs' records inside Beam, buckets grouped by size; checking
    every accepted record of the sample at once must give the same rows."""
    expected = validate_bucket(sample_fleet())
    published = _published_results(sample_out)
    sources = published.filter(pa.compute.is_in(published["target"], expected["target"].unique()))
    assert sources.to_pylist() == expected.to_pylist()


def test_every_expectation_passes_on_the_sample_and_the_report_says_so(sample_out: Path) -> None:
    results = _published_results(sample_out).to_pylist()
    assert [r for r in results if not r["success"]] == []
    report = (sample_out / "validation_report.md").read_text()
    assert f"{len(results)} expectations, 0 failed (fail), 0 warnings" in report
    printed = (sample_out.parent / "stdout.txt").read_text().splitlines()
    assert printed[-1] == (
        f"expectations: {len(results)} checked, 0 warnings -> {sample_out}/validation_report.md"
    )
    targets = {r["target"] for r in results}
    assert targets >= {"scheduler", "runtime", "profiles", "job_day_goodput", "chip_time_ledger"}
    # the same rows in the published table's data file
    parquet = pa.parquet.read_table(
        str(next((sample_out / "tables/validation_results").rglob("*.parquet")))
    )
    assert parquet.select(VALIDATION_RESULTS.names).to_pylist() == results


def test_a_run_checked_by_great_expectations_publishes_the_same_results(
    sample_out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`MPG_EXPECTATIONS=great-expectations`: GX itself checks every suite, in the workers and
    on the staged tables; what it finds is what mpg's engine found."""
    checked: list[str] = []
    evaluate = GxTargets.evaluate

    def spy(self: GxTargets, frame: pa.Table, target: Target) -> list:
        checked.append(target.name)
        return evaluate(self, frame, target)

    monkeypatch.setattr(GxTargets, "evaluate", spy)  # the run's steps run in this process
    out = tmp_path / "out"
    env = {"MPG_EXPECTATIONS": "great-expectations"}
    assert run_mpg("run", "--traces", SAMPLE, "--out", out, env=env).returncode == 0
    published = _published_results(out)
    assert sorted(set(checked)) == sorted(set(published.column("target").to_pylist()))
    assert published.equals(_published_results(sample_out))


def _doctored_fill(real):
    """fill_tables, with a planted bug: a job-day whose SG is 1.5."""

    def fill_tables(con: duckdb.DuckDBPyConnection, *args: object) -> None:
        real(con, *args)
        con.execute("update job_day_goodput set sg = 1.5 where job_id = 'train-a'")

    return fill_tables


def test_a_failed_output_expectation_fails_the_run_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    assert run_mpg("run", "--traces", SPEC_EXAMPLES / "edges", "--out", out).returncode == 0
    before, run_before = published_state(out), current_run(out)

    monkeypatch.setattr(publish_module, "fill_tables", _doctored_fill(publish_module.fill_tables))
    with pytest.raises(ValidationFailed) as failed:
        run_module.run(RunOptions(traces=str(SPEC_EXAMPLES / "tiny"), out=str(out)))

    # the edges tables are still the current ones
    assert (published_state(out), current_run(out)) == (before, run_before)
    (record,) = [
        json.loads(p.read_text())
        for p in (out / "runs").glob("*.json")
        if json.loads(p.read_text())["outcome"] == "failed"
    ]
    report = out / "runs" / f"{record['run_id']}-validation.md"
    assert str(failed.value) == (
        # the tiny example has 3 job-days (expected/job_day_goodput.csv); train-a has one
        "1 expectation of severity fail failed; first: job_day_goodput / job_day_goodput: "
        "sg within [0, 1] (1 of 3 rows unexpected); "
        f"report: {report}"
    )
    assert record["message"] == str(failed.value)
    assert find_user_error(failed.value) is failed.value  # the CLI prints it in one line, exit 2
    row = "| job_day_goodput | expect_column_values_to_be_between | sg within [0, 1] | fail"
    assert f"{row} | FAILED | 1 / 3 |" in report.read_text().splitlines()
    staging = out / ".mpg" / "staging"
    assert not staging.exists() or list(staging.iterdir()) == []

    # The Iceberg commits that went on beside the checks are named by no snapshot: the next
    # run removes them, and the folder keeps the metadata of the current snapshot's tables only.
    assert _iceberg_metadata(out)[0] > _iceberg_metadata(out)[1]
    monkeypatch.undo()
    assert run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out).returncode == 0
    on_disk, named = _iceberg_metadata(out)
    assert on_disk == named


def _iceberg_metadata(out: Path) -> tuple[set[str], set[str]]:
    """The Iceberg metadata files in `out`, and those its current snapshot names."""
    current, _ = read_current(OutputStore(str(out)))
    assert current is not None
    on_disk = {p.relative_to(out).as_posix() for p in out.glob("tables/*/metadata/*")}
    return on_disk, {*current.tables.values(), *current.metadata_files}
