"""Scaling out: Beam's options pass through `mpg run`, mpg packages itself for remote workers, the
real pipelines build for Dataflow, and a whole run through Beam's portable job API (the path of
Flink, Spark and Dataflow) publishes exactly what the in-process runner does."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import (
    DirectOptions,
    GoogleCloudOptions,
    PipelineOptions,
    SetupOptions,
    StandardOptions,
    TypeOptions,
)

from mpg.core.errors import OptionsError, find_user_error, one_line
from mpg.core.version import code_version
from mpg.definitions.catalog import load_catalog
from mpg.definitions.config import OutputConfig
from mpg.definitions.costs import cost_rates, load_cost_catalog
from mpg.output.state_key import StateKey
from mpg.output.store import OutputStore
from mpg.pipelines.io import discover_trace_files
from mpg.pipelines.options import RunOptions
from mpg.pipelines.packaging import REQUIREMENTS, package_args, pinned_requirements
from mpg.pipelines.plan import plan_run
from mpg.pipelines.run import prepare
from mpg.pipelines.runners import (
    SUPPORTED,
    WORKER_PLUGIN,
    beam_args,
    checked_options,
    needs_packaging,
    parse_options,
    pipeline_options,
)
from mpg.pipelines.update import build_update
from tests.support import emulators
from tests.support.cli import run_mpg
from tests.support.emulators import free_port, wait_for_port
from tests.support.files import ROOT, SAMPLE_TRACES, SPEC_EXAMPLES
from tests.support.snapshots import published_state

SAMPLE = SAMPLE_TRACES
DATAFLOW = (
    "--runner=DataflowRunner",
    "--project=my-project",
    "--region=europe-west4",
    "--temp_location=gs://my-bucket/tmp",
)
LOOPBACK = ("--runner=PortableRunner", "--environment_type=LOOPBACK")
# Where Beam caches the job server jars it downloads.
JARS = Path.home() / ".apache_beam" / "cache" / "jars"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ((), ("--runner=FnApiRunner",)),
        (("--runner", "DirectRunner"), ("--runner", "DirectRunner")),
        (
            (*LOOPBACK, "--job_endpoint=localhost:8099"),
            (*LOOPBACK, "--job_endpoint=localhost:8099"),
        ),
        (("--direct_num_workers=2",), ("--direct_num_workers=2", "--runner=FnApiRunner")),
    ],
)
def test_the_default_runner_is_added_only_when_none_is_named(
    given: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    assert beam_args(given) == (*expected, WORKER_PLUGIN)


@pytest.mark.parametrize(
    ("args", "buckets", "workers", "mode"),
    [
        (("--runner=FnApiRunner",), 4, 2, "multi_threading"),
        (("--runner=FnApiRunner",), 1, 1, "in_memory"),
        (("--runner=FnApiRunner", "--direct_num_workers=3"), 4, 3, "in_memory"),
        (("--runner=FnApiRunner", "--direct_running_mode", "in_memory"), 4, 1, "in_memory"),
        (("--runner=DirectRunner",), 4, 1, "in_memory"),
    ],
)
def test_two_worker_threads_share_two_buckets_or_more_unless_the_user_chose(
    args: tuple[str, ...], buckets: int, workers: int, mode: str
) -> None:
    direct = pipeline_options(args, buckets).view_as(DirectOptions)
    assert (direct.direct_num_workers, direct.direct_running_mode) == (workers, mode)


def test_a_view_of_the_options_is_made_once_and_sees_every_change() -> None:
    """Beam views the options per transform it applies; each class's view is made once
    (`runners._ViewedOnce`) and stays a window onto the one set of options."""
    options = pipeline_options(("--runner=FnApiRunner",), 4)
    types, direct = options.view_as(TypeOptions), options.view_as(DirectOptions)
    assert options.view_as(TypeOptions) is types
    types.pipeline_type_check = False
    direct.direct_num_workers = 5
    assert (
        options.get_all_options()["pipeline_type_check"],
        options.view_as(DirectOptions).direct_num_workers,
        PipelineOptions.from_dictionary(options.get_all_options(drop_default=True))
        .view_as(StandardOptions)
        .runner,
    ) == (False, 5, "FnApiRunner")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--temp_locaton=/tmp",), "unknown option --temp_locaton (neither mpg run's nor Beam's)"),
        (("--direct_num_workers=two",), "argument --direct_num_workers: invalid int value: 'two'"),
        (
            ("--runner=PortableRunner",),
            "--runner=PortableRunner needs --job_endpoint=HOST:PORT, a Flink, Spark or Beam job "
            "server's (docs/scaling.md)",
        ),
        (
            ("--runner=FlinkRunner", "--flink_job_server_jar=http://127.0.0.1:9/flink.jar"),
            "--runner=FlinkRunner cannot get its job server: Unable to fetch remote job server "
            "jar at http://127.0.0.1:9/flink.jar: <urlopen error [Errno 111] Connection refused>. "
            f"If no Internet access at runtime, stage the jar at {JARS}/flink.jar (or start one "
            "and pass --runner=PortableRunner --job_endpoint=HOST:PORT: docs/scaling.md)",
        ),
        (
            ("--runner=SparkRunner", "--spark_job_server_jar=/nowhere/spark.jar"),
            "--runner=SparkRunner cannot get its job server: Unable to parse jar URL "
            '"/nowhere/spark.jar". If using a full URL, make sure the scheme is specified. If '
            "using a local file path, make sure the file exists; you may have to first build the "
            "job server using `./gradlew runners:spark:3:job-server:shadowJar`. (or start one and "
            "pass --runner=PortableRunner --job_endpoint=HOST:PORT: docs/scaling.md)",
        ),
        (
            ("--runner=PrismRunner", "--prism_location=http://127.0.0.1:9/prism.zip"),
            "--runner=PrismRunner cannot get its job server: Provided --prism_location URL is "
            "not an Apache Beam Github Release page URL or download URL: "
            "http://127.0.0.1:9/prism.zip (or start one and pass --runner=PortableRunner "
            "--job_endpoint=HOST:PORT: docs/scaling.md)",
        ),
        (("--runner=DaskRunner",), f"--runner=DaskRunner is not supported: {SUPPORTED}"),
        (
            ("--runner=apache_beam.runners.dask.dask_runner.DaskRunner",),
            f"--runner=DaskRunner is not supported: {SUPPORTED}",
        ),
        (
            ("--dask_client_address=tcp://scheduler:8786",),
            f"--dask_client_address is an option of Beam's DaskRunner: {SUPPORTED}",
        ),
        *(
            (
                (*runner, "--environment_type=PROCESS", '--environment_config={"command": "boot"}'),
                f"--environment_type is for portable runners, not {name}, which runs its "
                "workers itself (--direct_running_mode=multi_processing --direct_num_workers=N "
                "for worker processes; or --runner=PortableRunner with an environment: "
                "docs/scaling.md)",
            )
            for runner, name in (((), "FnApiRunner"), (("--runner=DirectRunner",), "DirectRunner"))
        ),
    ],
)
def test_bad_beam_options_are_options_errors(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(OptionsError) as error:
        beam_args(args)
    assert str(error.value) == message


def test_an_unknown_runner_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_mpg(
        "run", "--traces", SPEC_EXAMPLES / "tiny", "--out", tmp_path, "--runner=SparkRuner"
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "mpg: error: Unexpected pipeline runner: SparkRuner. Valid values are DataflowRunner, "
        "BundleBasedDirectRunner, DirectRunner, SwitchingDirectRunner, InteractiveRunner, "
        "FlinkRunner, FnApiRunner, KafkaStreamsRunner, PortableRunner, PrismRunner, SparkRunner, "
        "TestDirectRunner, TestDataflowRunner or the fully qualified name of a PipelineRunner "
        "subclass."
    ]


@pytest.mark.skipif(
    importlib.util.find_spec("google.cloud.dataflow") is not None,
    reason="Beam's GCP extras are installed",
)
@pytest.mark.parametrize("args", [DATAFLOW, DATAFLOW[:2]], ids=["complete", "no region"])
def test_dataflow_without_beams_gcp_extras_says_what_to_install(args: tuple[str, ...]) -> None:
    """Before Beam's validator: with every option given, it asks GCS about the temp bucket
    (minutes of retries offline), and a missing option is not the first thing to fix."""
    with pytest.raises(OptionsError) as error:
        checked_options(args)
    assert str(error.value) == (
        "--runner=DataflowRunner needs Beam's Google Cloud extras: "
        "pip install 'mpg-fleet-goodput[dataflow]'"
    )


@pytest.mark.parametrize(
    ("args", "packaged"),
    [
        (("--runner=FnApiRunner",), False),
        (("--runner=DirectRunner", "--direct_running_mode=multi_processing"), False),
        (("--runner=PrismRunner",), False),
        (LOOPBACK, False),
        (("--runner=PortableRunner", "--job_endpoint=localhost:8099"), True),
        (("--runner=PrismRunner", "--environment_type=DOCKER"), True),
        (("--runner=FlinkRunner", "--flink_master=flink:8081"), True),
        (("--runner=SparkRunner", "--spark_master_url=spark://spark:7077"), True),
        (DATAFLOW, True),
        ((*DATAFLOW, "--sdk_container_image=europe-docker.pkg.dev/p/r/mpg:1"), False),
        (("--runner=FlinkRunner", "--setup_file=/src/mpg/pyproject.toml"), False),
        (("--runner=SparkRunner", "--extra_package=/wheels/mpg.whl"), False),
        (
            ("--runner=PortableRunner", "--environment_type=EXTERNAL", "--environment_config=w:5"),
            False,
        ),
    ],
)
def test_mpg_is_packaged_only_for_workers_outside_the_process_without_the_users_own(
    args: tuple[str, ...], packaged: bool
) -> None:
    assert needs_packaging(parse_options(args)) is packaged


@pytest.fixture(scope="module")
def worker_package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The wheel and requirements file `mpg run` stages for remote workers, built into a fresh
    cache: (cache, wheel, requirements)."""
    cache = tmp_path_factory.mktemp("cache")
    package, requirements = package_args(cache)
    return cache, Path(package.split("=", 1)[1]), Path(requirements.split("=", 1)[1])


def _source_files() -> set[str]:
    """Every file the workers need, as its path inside the installed package (`mpg/sql/...`)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    files = set()
    for package, folder in project["tool"]["setuptools"]["package-dir"].items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                prefix = package.replace(".", "/")
                files.add(f"{prefix}/{path.relative_to(ROOT / folder).as_posix()}")
    return files


def test_the_wheel_holds_every_module_sql_file_and_the_chip_catalog(
    worker_package: tuple[Path, Path, Path],
) -> None:
    _, wheel, _ = worker_package
    with zipfile.ZipFile(wheel) as archive:
        names = {n for n in archive.namelist() if ".dist-info/" not in n}
    assert names == _source_files()
    assert {
        "mpg/definitions/chips.v1.json",
        "mpg/sql/parse/runtime.sql",
        "mpg/pipelines/update.py",
    } <= names


# Imports every module of the unpacked wheel, with the source tree off sys.path, and reads its
# data files; prints where each module came from, and packages itself for workers again.
_IMPORT_FROM_WHEEL = """
import importlib, json, sys
from importlib import resources
sys.path.insert(0, sys.argv[1])
modules = json.loads(sys.argv[2])
files = {m: importlib.import_module(m).__file__ for m in modules}
from mpg.definitions.catalog import load_catalog
from mpg.sql.files import load_sql
sql = [str(p.relative_to(p.parents[1])) for p in resources.files("mpg.sql").rglob("*.sql")]
from pathlib import Path
from mpg.pipelines.packaging import package_args, source_root
from mpg.core.version import code_version
wheel = package_args(Path(sys.argv[3]))[0].split("=", 1)[1]
print(json.dumps({
    "code_version": code_version(),
    "outside": sorted(m for m, f in files.items() if not f.startswith(sys.argv[1])),
    "generations": len(load_catalog().generations),
    "sql_read": sum(len(load_sql(name)) > 0 for name in sorted(sql)),
    "source_root": source_root(),
    "wheel": wheel,
}))
"""


def _entries(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {n: archive.read(n) for n in archive.namelist() if not n.endswith("/RECORD")}


def _record(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        return set(archive.read(name).decode().splitlines())


def test_workers_import_everything_from_the_wheel_alone(
    worker_package: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """...and an mpg installed from that wheel (no source tree) ships the same wheel again,
    reassembled from its installed files: every file's bytes, and a RECORD of the same hashes."""
    _, wheel, _ = worker_package
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    modules = sorted(
        n.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for n in _source_files()
        if n.endswith(".py")
    )
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_FROM_WHEEL, unpacked, json.dumps(modules), tmp_path / "c"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stdout)
    again = Path(report.pop("wheel"))
    catalog = json.loads((ROOT / "mpg" / "definitions" / "chips.v1.json").read_text())
    assert report == {
        "code_version": code_version(),  # the checkout's: the same files, laid out otherwise
        "outside": [],
        "generations": len(catalog["chips"]),
        "sql_read": len([f for f in _source_files() if f.endswith(".sql")]),
        "source_root": None,
    }
    assert again.name == wheel.name
    assert _entries(tmp_path / again) == _entries(wheel)
    assert _record(tmp_path / again) == _record(wheel)


def test_the_requirements_pin_what_mpg_runs_with_here_without_test_tools(
    worker_package: tuple[Path, Path, Path],
) -> None:
    _, _, requirements = worker_package
    pins = dict(line.split("==") for line in requirements.read_text().splitlines())
    assert requirements.read_text() == "".join(
        f"{p}\n" for p in pinned_requirements("mpg-fleet-goodput")
    )
    assert {name: metadata.version(name) for name in pins} == pins
    direct = {"pyarrow", "polars", "duckdb", "numpy", "great_expectations", "rich"}
    assert direct <= set(pins)
    assert {"pytest", "hypothesis", "ruff"} & set(pins) == set()
    # Beam at the launcher's version, but not what Beam alone needs (its container brings that)
    assert pins["apache-beam"] == metadata.version("apache-beam")
    assert {"fastavro", "objsize", "pymongo"} & set(pins) == set()


def test_the_package_is_built_once_per_code_version(
    worker_package: tuple[Path, Path, Path],
) -> None:
    cache, wheel, requirements = worker_package
    assert package_args(cache) == (
        f"--extra_package={wheel}",
        f"--requirements_file={requirements}",
    )
    assert [p.name for p in cache.iterdir()] == [wheel.parent.name]
    assert sorted(p.name for p in wheel.parent.iterdir()) == [wheel.name, REQUIREMENTS]


def test_a_dataflow_command_line_reaches_beams_options(
    worker_package: tuple[Path, Path, Path],
) -> None:
    cache, wheel, requirements = worker_package
    options = parse_options((*DATAFLOW, *package_args(cache), "--max_num_workers=20"))
    cloud = options.view_as(GoogleCloudOptions)
    setup = options.view_as(SetupOptions)
    assert options.view_as(StandardOptions).runner == "DataflowRunner"
    assert (cloud.project, cloud.region, cloud.temp_location) == (
        "my-project",
        "europe-west4",
        "gs://my-bucket/tmp",
    )
    assert (setup.extra_packages, setup.requirements_file) == ([str(wheel)], str(requirements))
    assert options.get_all_options()["max_num_workers"] == 20


def _labels(pipeline: beam.Pipeline, options: PipelineOptions) -> list[str]:
    """The top-level step labels of a pipeline, through its portable (runner API) form: every
    step is pickled on the way, as for a remote runner."""
    proto = pipeline.to_runner_api()
    restored = beam.Pipeline.from_runner_api(proto, pipeline.runner, options)
    components = restored.to_runner_api().components.transforms
    (root,) = proto.root_transform_ids
    return [components[t].unique_name for t in components[root].subtransforms]


def test_the_real_pipeline_builds_for_dataflow(
    tmp_path: Path, gcs_emulator: emulators.ObjectStore
) -> None:
    """Beam validates Dataflow options by asking GCS about the temp bucket (its soft-delete
    policy): the emulator answers at once where, offline, the client would retry for minutes."""
    traces, out = str(SPEC_EXAMPLES / "tiny"), str(tmp_path / "out")
    files, _ = discover_trace_files(traces)
    key = StateKey(code_version(), ("v1",), "v1")
    store = OutputStore(out)
    rates = cost_rates(load_cost_catalog(), load_catalog(), OutputConfig())
    plan = plan_run(store, files, None, key, full=False, rates=rates)
    prepared = prepare(RunOptions(traces=traces, out=out), plan, store, "r1", rates)
    options = PipelineOptions(list(DATAFLOW))
    with gcs_emulator.activated():
        pipeline = beam.Pipeline(options=options)
        build_update(pipeline, prepared.update)
        labels = _labels(pipeline, options)
    assert type(pipeline.runner).__name__ == "DataflowRunner"
    # A first run has no jobs to rewrite, no previous buckets and no days to price again: those
    # lists (ListPlannedJobs, ListPreviousBuckets, ListRepricedDays) are left out of its graph.
    assert labels == [
        "ListNewTraceFiles",
        "IngestTraceFiles",
        "BucketInputs",
        "GroupByJobBucket",
        "UpdateJobRecords",
        "KeyUpdates",
        "JoinBuckets",
        "BucketEnds",
        "BucketsToAccount",
        "AccountJobs",
        "DaysToMerge",
        "MergeJobTableDays",
        "QuarantineRefs",
        "RecoverQuarantinedText",
        "WriteRecordSegments",
        "WriteDayFiles",
        "WriteTableChanges",
        "WriteSourceResults",
        "WriteFileStats",
        "WriteSnapshotState",
    ]


@pytest.fixture(scope="module")
def job_endpoint() -> Iterator[str]:
    """Beam's local job service: the portable Job API that Flink's, Spark's and Dataflow's job
    servers speak, on a free port of localhost, stopped after the module's tests."""
    port = free_port()
    command = [sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main"]
    service = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, service)
        yield f"localhost:{port}"
    finally:
        service.terminate()
        service.wait()


def test_a_run_through_the_portable_job_api_publishes_what_the_in_process_runner_does(
    job_endpoint: str, tmp_path: Path
) -> None:
    portable, local = tmp_path / "portable", tmp_path / "local"
    result = run_mpg(
        "run", "--traces", SAMPLE, "--out", portable, *LOOPBACK, f"--job_endpoint={job_endpoint}"
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert run_mpg("run", "--traces", SAMPLE, "--out", local).returncode == 0
    portable_state = published_state(portable)
    assert portable_state == published_state(local)
    assert "table job_day_goodput" in portable_state


def test_a_user_error_on_a_portable_runners_worker_is_still_one_line_and_exit_2(
    job_endpoint: str, tmp_path: Path
) -> None:
    """The worker's error reaches mpg as text, not as an exception: its last line is read."""
    traces = tmp_path / "traces"
    shutil.copytree(SPEC_EXAMPLES / "tiny", traces, ignore=shutil.ignore_patterns("expected*"))
    (traces / "runtime" / "broken.jsonl").symlink_to("/proc/self/mem")  # reading it: EIO
    out = tmp_path / "out"
    result = run_mpg(
        "run", "--traces", traces, "--out", out, *LOOPBACK, f"--job_endpoint={job_endpoint}"
    )
    message = "cannot read trace file runtime/broken.jsonl: Input/output error"
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"mpg: error: {message}"
    (record,) = (out / "runs").glob("*.json")
    assert json.loads(record.read_text())["message"] == message


_WORKER_TRACEBACK = """Pipeline job-1 failed in state FAILED: Error running pipeline.
Traceback (most recent call last):
  File "fn_runner.py", line 1395, in process_bundle
RuntimeError: Traceback (most recent call last):
  File "pipelines/io.py", line 157, in read_line_blocks
{}
"""


@pytest.mark.parametrize(
    ("last_line", "reported"),
    [
        (
            "mpg.core.errors.TraceFileError: cannot read trace file a.jsonl: Permission denied "
            "[while running 'ReadLineBlocks']",
            "cannot read trace file a.jsonl: Permission denied",
        ),
        (
            "mpg.core.errors.StoreError: cannot read Parquet file /o/p.parquet: bad magic",
            "cannot read Parquet file /o/p.parquet: bad magic",
        ),
        (
            "OSError: [Errno 28] No space left on device: '/o/t/part-0.parquet' "
            "[while running 'WriteRecordStore']",
            "No space left on device: /o/t/part-0.parquet",
        ),
        (  # a worker thread's error, wrapped once more by the runner
            "RuntimeError: OSError: [Errno 28] No space left on device: '/o/s/p.arrow' "
            "[while running 'IngestTraceFiles/WriteParsedRecords/ParDo(_WriteParsed)']",
            "No space left on device: /o/s/p.arrow",
        ),
        (
            "RuntimeError: mpg.core.errors.StoreError: "
            "cannot read Parquet file /o/p.parquet: bad magic",
            "cannot read Parquet file /o/p.parquet: bad magic",
        ),
        ("OSError: [Errno 2] No such file or directory: '/o/x'", None),
        ("KeyError: 'job_id'", None),
        ("RuntimeError: KeyError: 'job_id'", None),
        ("mpg.core.errors.NotAnError: looks like one", None),
    ],
)
def test_a_remote_workers_error_text_is_read_from_its_last_line(
    last_line: str, reported: str | None
) -> None:
    error = find_user_error(RuntimeError(_WORKER_TRACEBACK.format(last_line)))
    assert (one_line(error) if error else None) == reported


def test_a_bug_raised_while_handling_a_user_error_stays_a_bug() -> None:
    text = _WORKER_TRACEBACK.format(
        "mpg.core.errors.TraceFileError: cannot read trace file a.jsonl: Permission denied\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "NameError: name 'x' is not defined"
    )
    assert find_user_error(RuntimeError(text)) is None
