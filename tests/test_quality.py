"""Expectation suites: exact findings on hand-built buckets with planted violations, clean real
data, merging per-bucket parts, output suites on a real and a doctored staged database; and
Great Expectations itself finding the same as mpg's engine on frames with planted faults."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from mpg.catalog import load_catalog
from mpg.errors import OptionsError
from mpg.pipelines.io import discover_trace_files, read_line_blocks
from mpg.quality import (
    OUTPUT_SUITES,
    BucketValidator,
    ValidationFailed,
    combine_results,
    raise_for_failures,
    render_report,
    validate_outputs,
)
from mpg.quality.declare import Expect
from mpg.quality.engine import SuiteRunner, engine_named
from mpg.quality.outputs import output_frames
from mpg.quality.sources import source_frames, source_suites
from mpg.schemas import RECORD_SCHEMAS, SOURCES, concat
from mpg.transforms.parse import BlockParser
from mpg.transforms.reconcile import JobRecords, reconcile_jobs
from tests.conftest import SPEC_EXAMPLES, run_mpg

SAMPLE_TRACES = Path(__file__).parents[1] / "data" / "sample_traces"
T0 = datetime(2026, 11, 20, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def table(source: str, file: str, rows: list[tuple[int, dict]]) -> pa.Table:
    """A source's records from (line, fields) pairs; fields not given are NULL."""
    return pa.Table.from_pylist(
        [{**fields, "file": file, "line": line} for line, fields in rows],
        schema=RECORD_SCHEMAS[source],
    )


def submit(job: str, chips: int | None = 4, **fields: object) -> dict:
    return {
        "type": "JOB_SUBMIT",
        "ts": at(0),
        "job_id": job,
        "chips_requested": chips,
        "chip_generation": "tpu-v4",
        "workload_class": "training",
        "framework": "jax",
        **fields,
    }


def bucket(
    scheduler: pa.Table | None = None,
    runtime: pa.Table | None = None,
    profiles: pa.Table | None = None,
) -> JobRecords:
    """A job bucket; with no scheduler table, job j1 is submitted asking for 4 chips."""
    return JobRecords(
        scheduler=table("scheduler", "scheduler/s.jsonl", [(1, submit("j1"))])
        if scheduler is None
        else scheduler,
        runtime=RECORD_SCHEMAS["runtime"].empty_table() if runtime is None else runtime,
        profiles=RECORD_SCHEMAS["profiles"].empty_table() if profiles is None else profiles,
    )


def findings(results: pa.Table, target: str) -> dict[str, tuple[bool, int, int | None]]:
    """description -> (success, element_count, unexpected_count) for one target."""
    return {
        r["description"]: (r["success"], r["element_count"], r["unexpected_count"])
        for r in results.to_pylist()
        if r["target"] == target
    }


def failed(results: pa.Table, target: str) -> dict[str, tuple[int, int | None]]:
    """description -> (element_count, unexpected_count) of the target's failed expectations."""
    return {d: (n, u) for d, (ok, n, u) in findings(results, target).items() if not ok}


@pytest.fixture(scope="module")
def validator() -> BucketValidator:
    return BucketValidator()


# -- source suites -----------------------------------------------------------------------------

PLANTED_SCHEDULER = [
    (0, submit("j3", framework=None)),  # line 0; framework missing
    (1, submit("j1")),
    (2, {"type": "TASK_SCHEDULE", "ts": at(1), "job_id": "j1", "task_index": 0, "chips": 8}),
    (3, {"type": "TASK_SCHEDULE", "ts": at(2), "job_id": "j1", "task_index": -1, "chips": 0}),
    (4, {"type": "TASK_SCHEDULE", "ts": at(3), "job_id": "j1", "task_index": 1}),  # no chips
    (5, submit("j1", 2, ts=at(5), chip_generation="tpu-v99")),  # a second JOB_SUBMIT
    (6, {"type": "JOB_END", "ts": at(-60), "job_id": "j1", "state": "EXPLODED"}),
    (7, {"type": "TASK_EVICT", "ts": at(10), "job_id": "j2", "task_index": 0}),  # unknown job
    (8, submit("", 0, workload_class="research")),
    (3, {"type": "TASK_FINISH", "ts": at(20), "job_id": "j1", "task_index": 0}),  # line 3 again
    (11, {"type": "JOB_PAUSE", "ts": at(30), "job_id": "j1"}),
]


def test_planted_scheduler_violations_are_counted_exactly(validator: BucketValidator) -> None:
    results = validator(bucket(table("scheduler", "scheduler/s.jsonl", PLANTED_SCHEDULER)))
    assert failed(results, "scheduler") == {
        "(file, line) is unique": (11, 2),
        "line >= 1": (11, 1),
        "job_id is not empty": (11, 1),
        "the record's job has a JOB_SUBMIT in its bucket": (11, 1),
        "type is one of the scheduler event types": (11, 1),
        "framework is not null where type in (JOB_SUBMIT)": (4, 1),
        "chips is not null where type in (TASK_SCHEDULE)": (3, 1),
        "chips_requested >= 1": (11, 1),
        "chips >= 1": (11, 1),
        "task_index >= 0": (11, 1),
        "chip_generation is one of the catalog v1's generations": (11, 1),
        "workload_class is one of the workload classes": (11, 1),
        "state is one of the job states": (11, 1),
        "a job has one JOB_SUBMIT and at most one JOB_END": (11, 2),
        "JOB_END is not before the job's JOB_SUBMIT": (11, 1),
        "a task's chips are within the job's request": (11, 1),
    }
    passed = findings(results, "scheduler")
    assert passed["task_index is not null where type in (TASK_SCHEDULE, TASK_EVICT, TASK_FAIL, "
                  "TASK_LOST, TASK_FINISH)"] == (True, 5, 0)  # fmt: skip
    assert passed["state is not null where type in (JOB_END)"] == (True, 1, 0)
    assert set(results.column("severity").to_pylist()) == {"warn"}


def test_a_sample_shows_the_first_unexpected_rows_with_their_provenance(
    validator: BucketValidator,
) -> None:
    results = validator(bucket(table("scheduler", "scheduler/s.jsonl", PLANTED_SCHEDULER)))
    samples = {r["description"]: r["unexpected_sample"] for r in results.to_pylist()}
    assert json.loads(samples["a task's chips are within the job's request"]) == [
        {"file": "scheduler/s.jsonl", "line": 2, "job_chips_requested": 4, "chips": 8}
    ]
    assert json.loads(samples["JOB_END is not before the job's JOB_SUBMIT"]) == [
        {
            "file": "scheduler/s.jsonl",
            "line": 6,
            "end_ts": "2026-11-19T23:00:00+00:00",
            "job_submit_ts": "2026-11-20T00:00:00+00:00",
        }
    ]
    assert json.loads(samples["chips is not null where type in (TASK_SCHEDULE)"]) == [
        {"file": "scheduler/s.jsonl", "line": 4, "chips": None}
    ]
    assert samples["type is string"] is None


def test_planted_runtime_violations_are_counted_exactly(validator: BucketValidator) -> None:
    span = {"job_id": "j1", "attempt": 0, "kind": "step", "start": at(0), "end": at(10), "step": 1}
    runtime = table(
        "runtime",
        "runtime/r.jsonl",
        [
            (1, span),
            (2, {**span, "attempt": -1, "kind": "init", "step": None}),
            (3, {**span, "kind": "nap", "step": None}),
            (4, {**span, "step": None}),
            (5, {**span, "kind": "checkpoint_save", "start": at(30), "end": at(25)}),
            (6, {**span, "job_id": "j9", "kind": "compile", "step": None}),
        ],
    )
    results = validator(bucket(runtime=runtime))
    assert failed(results, "runtime") == {
        "the record's job has a JOB_SUBMIT in its bucket": (6, 1),
        "kind is one of the span kinds": (6, 1),
        "step is not null where kind in (step, checkpoint_save, checkpoint_restore)": (3, 1),
        "attempt >= 0": (6, 1),
        "a span ends at or after its start": (6, 1),
    }
    assert not failed(results, "scheduler") and not failed(results, "profiles")


def test_planted_profile_violations_are_counted_exactly(validator: BucketValidator) -> None:
    good = {
        "job_id": "j1",
        "ts": at(0),
        "step": 1,
        "step_time_s": 1.0,
        "model_flops": 1e12,
        "chips": 4,
    }
    profiles = table(
        "profiles",
        "profiles/p.jsonl",
        [
            (1, good),
            (2, {**good, "step_time_s": 0.0}),
            (3, {**good, "model_flops": -1.0}),
            (4, {**good, "hbm_bytes": -5.0}),
            (5, {**good, "chips": 0}),
            (6, {**good, "chips": 8}),
            (7, {**good, "job_id": "j7", "chips": 2}),
        ],
    )
    assert failed(validator(bucket(profiles=profiles)), "profiles") == {
        "the record's job has a JOB_SUBMIT in its bucket": (7, 1),
        "step_time_s > 0": (7, 1),
        "model_flops >= 0": (7, 1),
        "hbm_bytes >= 0": (7, 1),
        "chips >= 1": (7, 1),
        "a profile's chips are within the job's request": (7, 1),
    }


def test_a_column_of_the_wrong_type_is_observed_not_counted(validator: BucketValidator) -> None:
    runtime = bucket().runtime
    wrong = runtime.set_column(1, pa.field("attempt", pa.int32()), runtime["attempt"].cast("int32"))
    row = next(r for r in validator(bucket(runtime=wrong)).to_pylist() if r["column"] == "attempt")
    assert (row["description"], row["success"], row["unexpected_count"], row["observed"]) == (
        "attempt is int64",
        False,
        None,
        "int32",
    )


def sample_fleet() -> JobRecords:
    """Every record of data/sample_traces, parsed and reconciled as one job bucket."""
    parser = BlockParser(load_catalog())
    parsed: dict[str, list[pa.Table]] = {s: [] for s in SOURCES}
    for file in discover_trace_files(SAMPLE_TRACES)[0]:
        for block in read_line_blocks(file):
            parsed[file.source].append(
                parser.parse(file.source, file.name, block.data, block.first_line).records
            )
    parser.close()
    return reconcile_jobs({s: concat(parsed[s], RECORD_SCHEMAS[s]) for s in SOURCES}).records


def test_the_sample_fleet_meets_every_source_expectation(validator: BucketValidator) -> None:
    records = sample_fleet()
    results = validator(records)
    assert [r["description"] for r in results.to_pylist() if not r["success"]] == []
    rows = {r["target"]: r["element_count"] for r in results.to_pylist()}
    assert rows == {s: records.table(s).num_rows for s in SOURCES}
    assert validator(records).equals(results)  # the same input, the same results


def test_combining_parts_sums_counts_and_keeps_the_first_rows(validator: BucketValidator) -> None:
    span = {"job_id": "j1", "attempt": -1, "kind": "init", "start": at(0), "end": at(1)}
    part_a = validator(bucket(runtime=table("runtime", "runtime/r.jsonl", [(9, span)])))
    part_b = validator(
        bucket(runtime=table("runtime", "runtime/q.jsonl", [(n, span) for n in range(1, 8)]))
    )
    combined = combine_results([part_a, part_b])
    assert combined.num_rows == part_a.num_rows
    assert combined.column("description").to_pylist() == part_a.column("description").to_pylist()
    assert findings(combined, "runtime")["attempt >= 0"] == (False, 8, 8)
    assert findings(combined, "scheduler")["(file, line) is unique"] == (True, 2, 0)
    row = next(r for r in combined.to_pylist() if r["description"] == "attempt >= 0")
    assert [(s["file"], s["line"]) for s in json.loads(row["unexpected_sample"])] == [
        ("runtime/q.jsonl", n) for n in range(1, 6)
    ]
    assert [r["observed"] for r in combined.to_pylist() if r["description"] == "line is int64"] == [
        "int64"
    ] * 3
    assert combine_results([part_b, part_a]).equals(combined)


def test_combining_is_associative_so_beam_may_combine_in_any_grouping(
    validator: BucketValidator,
) -> None:
    runtime = bucket().runtime
    int32 = runtime.set_column(1, pa.field("attempt", pa.int32()), runtime["attempt"].cast("int32"))
    span = {"job_id": "j1", "attempt": -1, "kind": "init", "start": at(0), "end": at(1)}
    a, b, c = (
        validator(bucket(runtime=int32)),
        validator(bucket(runtime=table("runtime", "runtime/q.jsonl", [(1, span)]))),
        validator(bucket(runtime=table("runtime", "runtime/r.jsonl", [(1, span), (2, span)]))),
    )
    flat = combine_results([a, b, c])
    assert combine_results([combine_results([c, a]), b]).equals(flat)
    attempt_type = next(r for r in flat.to_pylist() if r["description"] == "attempt is int64")
    assert (attempt_type["success"], attempt_type["observed"]) == (False, "int32; int64")


def test_only_not_null_takes_a_row_condition() -> None:
    with pytest.raises(ValueError, match="only expect_column_values_to_not_be_null"):
        Expect("expect_column_values_to_be_between", {"column": "a"}, "a", when=("b", ("x",)))


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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_failed_output_expectation_is_one_line_naming_the_first(doctored: pa.Table) -> None:
    with pytest.raises(ValidationFailed) as raised:
        raise_for_failures(doctored)
    assert str(raised.value) == (
        "6 expectations of severity fail failed; first: job_day_goodput / job_day_goodput: "
        "(day, job_id, metric_version) is unique (2 of 4 rows unexpected)"
    )
    assert raised.value.failures.num_rows == 6


@pytest.mark.slow
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
from mpg.pipelines.lookup import segment_records
from mpg.pipelines.snapshot import read_current
from mpg.pipelines.store import OutputStore
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


@pytest.mark.slow
def test_validation_never_reaches_for_the_network(isolated: tuple[dict, list[Path]]) -> None:
    seen, _ = isolated
    assert seen["network"] == []
    assert seen["passed"] and all(seen["passed"])
    assert seen["analytics"] == "false"  # forced, whatever the user's environment says


@pytest.mark.slow
def test_validation_writes_nothing_in_home_tmpdir_or_cwd(
    isolated: tuple[dict, list[Path]],
) -> None:
    seen, folders = isolated
    assert seen["writes"] == []
    assert [list(f.iterdir()) for f in folders] == [[], [], []]


def test_importing_the_cli_and_pipelines_does_not_import_great_expectations() -> None:
    modules = "mpg.cli, mpg.pipelines.run, mpg.pipelines.update, mpg.pipelines.publish, mpg.quality"
    check = f"import sys, {modules}; assert 'great_expectations' not in sys.modules"
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_cli_starts_without_beam_or_great_expectations() -> None:
    """`mpg explain`, `mpg --help` and every user error before a pipeline runs stay fast (and
    free of Beam's import-time warnings)."""
    check = (
        "import sys, mpg.cli; "
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


def test_the_engine_is_named_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPG_EXPECTATIONS", raising=False)
    assert engine_named() == "mpg"
    monkeypatch.setenv("MPG_EXPECTATIONS", "great-expectations")
    assert engine_named() == "great-expectations"
    monkeypatch.setenv("MPG_EXPECTATIONS", "pandera")
    with pytest.raises(OptionsError, match=r"^MPG_EXPECTATIONS=pandera: not one of mpg, great-"):
        engine_named()
