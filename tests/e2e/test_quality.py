"""Expectation suites on published tables: the output suites on a real and a doctored staged
database, the run's validation isolated from the network, home, tmp and cwd, the CLI's imports,
and Great Expectations itself finding the same as mpg's engine on real frames with planted faults.
(The source suites on hand-built buckets: tests/unit/test_source_suites.py.)"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from mpg.definitions.catalog import load_catalog
from mpg.quality import (
    OUTPUT_SUITES,
    ValidationFailed,
    raise_for_failures,
    render_report,
    validate_outputs,
)
from mpg.quality.engine import SuiteRunner
from mpg.quality.outputs import output_frames
from mpg.quality.sources import source_frames, source_suites
from mpg.schemas import SOURCES
from tests.support.cli import run_mpg
from tests.support.expectations import failed
from tests.support.files import SPEC_EXAMPLES
from tests.support.fleet import sample_fleet

# -- output suites -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny") / "out"
    result = run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def outputs_of(database: Path, run_counts: pa.Table | None = None) -> pa.Table:
    with duckdb.connect(str(database), read_only=True) as con:
        counts = con.table("record_counts").to_arrow_table() if run_counts is None else run_counts
        return validate_outputs(con, counts)


def test_published_spec_examples_meet_every_output_expectation(
    spec_example: Path, tmp_path: Path
) -> None:
    assert run_mpg("run", "--traces", spec_example, "--out", tmp_path).returncode == 0
    results = outputs_of(tmp_path / "mpg.duckdb")
    assert [r["description"] for r in results.to_pylist() if not r["success"]] == []
    expected = sum(len(t.expectations) for s in OUTPUT_SUITES for t in s.targets)
    assert results.num_rows == expected == 22
    raise_for_failures(results)  # nothing to raise


@pytest.fixture(scope="module")
def doctored(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    """The tiny run's database with five planted faults, validated against the run's counts."""
    database = tmp_path_factory.mktemp("doctored") / "mpg.duckdb"
    shutil.copy(tiny_run / "mpg.duckdb", database)
    with duckdb.connect(str(database)) as con:
        run_counts = con.table("record_counts").to_arrow_table()
        # 1. one ledger row of train-a 100 chip-seconds too large
        con.execute(
            "update chip_time_ledger set chip_s = chip_s + 100 "
            "where job_id = 'train-a' and category = 'compile'"
        )
        # 2. an sg above 1
        con.execute("update job_day_goodput set sg = 1.5 where day = '2026-11-21'")
        # 3. a job-day twice: the 8 slices of its day that cover it no longer add up
        con.execute(
            "insert into job_day_goodput select * from job_day_goodput "
            "where job_id = 'serve-b' and day = '2026-11-20'"
        )
        # 4. a PG above 1: a warning only
        con.execute("update job_day_goodput set pg = 1.7 where job_id = 'train-a'")
        # 5. one more runtime record accepted than read
        con.execute("update record_counts set accepted = accepted + 1 where source = 'runtime'")
    return outputs_of(database, run_counts)


def test_doctored_outputs_fail_exactly_where_planted(doctored: pa.Table) -> None:
    assert failed(doctored, "job_day_goodput") == {
        "(day, job_id, metric_version) is unique": (4, 2),
        "sg within [0, 1]": (4, 1),
        "pg within [0, 1] (above 1: a step beat the catalog's roofline; reported, not fatal)": (
            4,
            1,
        ),
    }
    assert failed(doctored, "ledger_by_job_day") == {
        "the ledger adds up to wanted_chip_s per job-day "
        "(|ledger - wanted| <= 1e-09 x sum|chip_s| + 1e-06)": (4, 1)
    }
    assert failed(doctored, "slices_vs_job_days") == {
        "each slice's chip-time sums equal those of the job-days it covers "
        "(relative tolerance 1e-09)": (23, 8)
    }
    assert failed(doctored, "record_counts_reconciled") == {
        "records_read = accepted + duplicates + quarantined": (3, 1),
        "the published counts equal the run's counts": (3, 1),
    }
    for target in ("chip_time_ledger", "goodput_by_slice", "quarantine"):
        assert failed(doctored, target) == {}
    ledger = next(r for r in doctored.to_pylist() if r["target"] == "ledger_by_job_day")
    assert [
        (s["day"], s["job_id"], s["excess"] > 99) for s in json.loads(ledger["unexpected_sample"])
    ] == [("2026-11-20", "train-a", True)]


def test_a_failed_output_expectation_is_one_line_naming_the_first(doctored: pa.Table) -> None:
    with pytest.raises(ValidationFailed) as raised:
        raise_for_failures(doctored)
    assert str(raised.value) == (
        "6 expectations of severity fail failed; first: job_day_goodput / job_day_goodput: "
        "(day, job_id, metric_version) is unique (2 of 4 rows unexpected)"
    )
    assert raised.value.failures.num_rows == 6


def test_the_report_sums_up_then_lists_problems_and_every_suite(doctored: pa.Table) -> None:
    report = render_report(doctored)
    lines = report.splitlines()
    assert lines[:3] == ["# Validation report", "", "22 expectations, 6 failed (fail), 1 warnings"]
    assert "- **warning** job_day_goodput / job_day_goodput: pg within [0, 1]" in report
    assert [line for line in lines if line.startswith("## ")] == [
        "## Problems",
        *(f"## {s.name} ({s.version})" for s in OUTPUT_SUITES),
    ]
    assert render_report(doctored) == report


# -- isolation: no network, no files written, no GX on the CLI's import path -------------------

ISOLATED_RUN = r"""
import json, os, sys
from pathlib import Path

NETWORK = {"socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto",
           "socket.sendmsg", "urllib.Request"}
CHANGES = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "shutil.rmtree", "shutil.copyfile",
           "shutil.move", "tempfile.mkstemp", "tempfile.mkdtemp", "os.truncate", "os.symlink",
           "os.link"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
seen = {"network": [], "writes": []}

def guard(event, args):
    if event in NETWORK:
        seen["network"].append(f"{event} {args!r}")
        raise RuntimeError(f"blocked {event}")
    if event in CHANGES:
        seen["writes"].append(f"{event} {args!r}")
    elif event == "open" and (
        any(c in str(args[1] or "") for c in "wax+") or (args[2] or 0) & WRITE_FLAGS
    ):
        seen["writes"].append(f"open {args!r}")

sys.addaudithook(guard)

import duckdb
from mpg.output.lookup import segment_records
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.quality import BucketValidator, combine_results, render_report, validate_outputs

out = Path(sys.argv[1])
validator = BucketValidator(engine="great-expectations")
store = OutputStore(str(out))
snapshot, _ = read_current(store)
sources = combine_results(validator(r) for r in segment_records(store, snapshot))
with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
    outputs = validate_outputs(
        con, con.table("record_counts").to_arrow_table(), "great-expectations"
    )
render_report(outputs)
print(json.dumps({
    **seen,
    "passed": sources["success"].to_pylist() + outputs["success"].to_pylist(),
    "analytics": os.environ["GX_ANALYTICS_ENABLED"],
}))
"""


@pytest.fixture(scope="module")
def isolated(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[Path]]:
    """Validate the tiny run with Great Expectations in a child process with HOME, TMPDIR and
    cwd in empty folders, an audit hook that refuses the network and records every write, and GX
    analytics asked for."""
    home, tmp, cwd = (tmp_path_factory.mktemp(n) for n in ("home", "tmpdir", "cwd"))
    env = {
        **os.environ,
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PYTHONDONTWRITEBYTECODE": "1",
        "GX_ANALYTICS_ENABLED": "true",
    }
    result = subprocess.run(
        [sys.executable, "-c", ISOLATED_RUN, str(tiny_run)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1]), [home, tmp, cwd]


def test_validation_never_reaches_for_the_network(isolated: tuple[dict, list[Path]]) -> None:
    seen, _ = isolated
    assert seen["network"] == []
    assert seen["passed"] and all(seen["passed"])
    assert seen["analytics"] == "false"  # forced, whatever the user's environment says


def test_validation_writes_nothing_in_home_tmpdir_or_cwd(
    isolated: tuple[dict, list[Path]],
) -> None:
    seen, folders = isolated
    assert seen["writes"] == []
    assert [list(f.iterdir()) for f in folders] == [[], [], []]


def test_importing_the_cli_and_pipelines_does_not_import_great_expectations() -> None:
    modules = (
        "mpg.cli.command, mpg.pipelines.run, mpg.pipelines.update, mpg.pipelines.publish, "
        "mpg.quality"
    )
    check = f"import sys, {modules}; assert 'great_expectations' not in sys.modules"
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_cli_starts_without_beam_or_great_expectations() -> None:
    """`mpg explain`, `mpg --help` and every user error before a pipeline runs stay fast (and
    free of Beam's import-time warnings)."""
    check = (
        "import sys, mpg.cli.command; "
        "assert not [m for m in sys.modules if m.startswith(('apache_beam', 'great_expectations'))]"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- Great Expectations, the reference: the same findings as mpg's engine ---------------------


def _planted(frame: pa.Table, rng: random.Random, rate: float) -> pa.Table:
    """`frame` with a share `rate` of its values replaced by hostile ones of the column's type
    (nulls, NaN, infinities, zero, negatives, empty or unknown strings, another row's instant)
    and a few rows repeated; every column nullable, as a frame from anywhere could be."""
    hostile = {
        "int": [None, -1, 0, 1, 2, 10**12],
        "float": [None, float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 1.5, 1e-12],
        "string": [None, "", "bogus", "JOB_END", "JOB_SUBMIT"],
        "bool": [None, True, False],
    }
    columns = {}
    for field in frame.schema:
        values, kind = frame.column(field.name).to_pylist(), str(field.type)
        kind = next((k for k in hostile if kind.startswith(k)), kind)
        choices = hostile.get(kind, [None, *[v for v in values[:3] if v is not None]])
        columns[field.name] = pa.array(
            [rng.choice(choices) if rng.random() < rate else v for v in values], field.type
        )
    planted = pa.table(columns, schema=pa.schema([f.with_nullable(True) for f in frame.schema]))
    repeated = [rng.randrange(frame.num_rows) for _ in range(rng.randrange(4) if frame else 0)]
    return pa.concat_tables([planted, planted.take(pa.array(repeated, pa.int64()))])


@pytest.fixture(scope="module")
def real_frames(tiny_run: Path) -> dict[str, pa.Table]:
    """Every target's frame from real data: the sample fleet's sources, the tiny run's outputs."""
    frames = dict(source_frames(sample_fleet()))
    with duckdb.connect(str(tiny_run / "mpg.duckdb"), read_only=True) as con:
        frames |= output_frames(con, con.table("record_counts").to_arrow_table())
    return frames


def test_great_expectations_finds_what_mpg_finds(real_frames: dict[str, pa.Table]) -> None:
    """Every target of every suite, on its real frame and on copies with faults planted at
    several rates (and empty), their rows shuffled: the two engines give the same result rows,
    counts and samples (the first unexpected rows by the target's index) included."""
    suites = (*source_suites(load_catalog()), *OUTPUT_SUITES)
    engines = [SuiteRunner(suites, e) for e in ("mpg", "great-expectations")]
    rng, failures = random.Random(20), 0
    for trial, rate in enumerate((0.0, 0.01, 0.1, 0.5, 0.5)):
        for name, frame in real_frames.items():
            frame = frame.slice(rng.randrange(max(frame.num_rows - 300, 1)), 300)
            frame = _planted(frame, rng, rate) if rate else frame
            frame = frame.slice(0, 0) if trial == 4 and name in SOURCES else frame
            shuffled = list(range(frame.num_rows))
            rng.shuffle(shuffled)
            frame = frame.take(pa.array(shuffled, pa.int64()))
            mine, theirs = (engine.validate(name, frame) for engine in engines)
            assert mine.to_pylist() == theirs.to_pylist(), (name, rate)
            failures += mine.num_rows - sum(mine.column("success").to_pylist())
    assert failures > 100  # the faults were found, not only agreed about
