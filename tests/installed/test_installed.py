"""The package as its users install it (issue 23): a wheel of the checkout installed without
extras in a fresh virtual environment, every command's main path run there as a process on the
sample fleet and on each adapter's committed fixture, each output equal to what the checkout
gives in this process; a missing extra named in one line; the worker package that the installed
mpg ships (`--extra_package`, `--requirements_file`) installed in a second fresh environment as
Beam's SDK container installs it, whose worker pool then runs every step of a portable run; and
the one extra a command needs (`[xla]`) added for that command.

    make test-installed    (its own target, which .ci/run also runs: the environments take
                            minutes to build, so it stays out of make test's ten)

The environments are built and cached by `tests/installed/environments.py`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from mpg.core.version import code_version
from mpg.pipelines.packaging import build_wheel
from tests.installed.environments import ROOT, Environments, environments, freeze, pip, run
from tests.support.cli import run_mpg
from tests.support.emulators import free_port, stop, wait_for_port
from tests.support.files import FIXTURES
from tests.support.snapshots import PER_RUN, published_state

SAMPLE = ROOT / "data" / "sample_traces"
ADAPTERS = FIXTURES / "adapters"
XPLANE = ADAPTERS / "xplane" / "train.xplane.pb"
# One import per format, on its committed fixture (the adapters' own tests' arguments).
IMPORTS = {
    "ml-goodput": (
        *sorted((ADAPTERS / "ml-goodput").glob("*.jsonl")), "--chips", "4",
        "--chip-generation", "tpu-v5e",
    ),
    "xplane": (
        XPLANE, "--job-id", "mlp", "--chips", "2",
        "--cost-analysis", ADAPTERS / "xplane" / "cost_analysis.json",
    ),
    "pytorch": (ADAPTERS / "pytorch" / "single", "--job-id", "mlp", "--chips", "4"),
    "alibaba-gpu-v2023": (ADAPTERS / "alibaba-gpu-v2023", "--origin", "2023-07-01T00:00:00Z"),
    "philly": (ADAPTERS / "philly", "--timezone", "America/Los_Angeles"),
    "slurm": (
        ADAPTERS / "slurm" / "sacct.txt", "--gpu-type", "a100=gpu-a100", "--gpu-type",
        "H100=gpu-h100",
    ),
    "kubernetes": (ADAPTERS / "kubernetes", "--as-of", "2026-11-20T16:00:00Z"),
}  # fmt: skip
# Packages of the development extras that the default install must not have.
DEV_ONLY = ("jax", "sqlalchemy", "ml_goodput_measurement", "pytest", "playwright", "moto")


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Environments:
    wheel = build_wheel(ROOT, tmp_path_factory.mktemp("wheel"))
    return environments(wheel)


def mpg(envs: Environments, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The installed `mpg` command, as a process, with no progress lines."""
    env = {**os.environ, "MPG_PROGRESS": "none"}
    return subprocess.run(
        [str(envs.bin("launcher", "mpg")), *map(str, args)],
        capture_output=True, text=True, env=env, timeout=900, check=False,
        cwd=tempfile.gettempdir(),
    )  # fmt: skip


@pytest.fixture(scope="module")
def published(envs: Environments, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample run by the installed mpg, and by the checkout in this process: (theirs, ours)."""
    tmp = tmp_path_factory.mktemp("published")
    installed = mpg(envs, "run", "--traces", SAMPLE, "--out", tmp / "installed")
    assert installed.returncode == 0, installed.stderr
    checkout = run_mpg("run", "--traces", SAMPLE, "--out", tmp / "checkout")
    assert checkout.returncode == 0, checkout.stderr
    assert _records(installed.stdout) == _records(checkout.stdout)
    return tmp / "installed", tmp / "checkout"


def _records(stdout: str) -> list[str]:
    """The run summary's `records read = accepted + duplicates + quarantined` lines."""
    return [line for line in stdout.splitlines() if re.match(r"\s+\w+\s+\d+ = ", line)]


def test_the_default_install_has_no_extras_and_its_dependencies_agree(envs: Environments) -> None:
    code = f"import importlib.util as u; print([m for m in {DEV_ONLY!r} if u.find_spec(m)])"
    assert run(envs.bin("launcher", "python"), "-c", code).strip() == "[]"
    pip(envs.launcher, "check")


def test_run_publishes_what_the_checkout_publishes(published: tuple[Path, Path]) -> None:
    installed, checkout = published
    state = published_state(installed, skip=PER_RUN)
    assert "table job_day_goodput" in state
    assert state == published_state(checkout, skip=PER_RUN)


@pytest.mark.parametrize(
    "args",
    [
        ("sql", "--json", "SELECT * FROM fleet_mpg_by_day ORDER BY ALL"),
        ("sql", "--csv", "SELECT * FROM chip_time_ledger ORDER BY ALL LIMIT 50"),
        ("explain", "--job", "train-00001", "--json"),
        ("compare", "--base", "2026-11-20..2026-11-20", "--current", "2026-11-21..2026-11-22",
         "--json"),
    ],
    ids=["sql-json", "sql-csv", "explain", "compare"],
)  # fmt: skip
def test_readers_print_what_the_checkout_prints(
    envs: Environments, published: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    installed, checkout = published
    theirs = mpg(envs, *args, "--out", installed)
    assert theirs.returncode == 0, theirs.stderr
    ours = run_mpg(*args, "--out", checkout)
    assert ours.returncode == 0, ours.stderr
    assert theirs.stdout.replace(str(installed), "OUT") == ours.stdout.replace(str(checkout), "OUT")


def _specs(html: Path) -> object:
    """The report's chart data, floats to 12 significant digits (their last digit depends on the
    order DuckDB sums in)."""
    found = re.search(
        r'<script type="application/json" id="mpg-specs">(.*?)</script>', html.read_text()
    )
    assert found is not None
    return json.loads(found[1], parse_float=lambda s: float(f"{float(s):.12g}"))


def test_the_report_shows_what_the_checkouts_shows(
    envs: Environments, published: tuple[Path, Path], tmp_path: Path
) -> None:
    installed, checkout = published
    theirs = mpg(envs, "report", "--out", installed, "--file", tmp_path / "installed.html")
    assert theirs.returncode == 0, theirs.stderr
    ours = run_mpg("report", "--out", checkout, "--file", tmp_path / "checkout.html")
    assert ours.returncode == 0, ours.stderr
    assert _specs(tmp_path / "installed.html") == _specs(tmp_path / "checkout.html")


def test_backfill_publishes_what_the_checkout_publishes(
    envs: Environments, published: tuple[Path, Path], tmp_path: Path
) -> None:
    """On copies of both folders (a copied folder is a folder of its own)."""
    installed, checkout = (shutil.copytree(p, tmp_path / p.name) for p in published)
    window = ("--metric-version", "v2", "--from", "2026-11-20", "--to", "2026-11-22")
    theirs = mpg(envs, "backfill", "--out", installed, *window)
    assert theirs.returncode == 0, theirs.stderr
    assert run_mpg("backfill", "--out", checkout, *window).returncode == 0
    assert published_state(installed, skip=PER_RUN) == published_state(checkout, skip=PER_RUN)


def _files(root: Path) -> dict[str, list[bytes]]:
    """Every file under `root`: its lines, sorted (the slurm import writes its scheduler events
    in an order that changes from run to run)."""
    return {
        p.relative_to(root).as_posix(): sorted(p.read_bytes().splitlines())
        for p in root.rglob("*")
        if p.is_file()
    }


def test_simulate_writes_what_the_checkout_writes(envs: Environments, tmp_path: Path) -> None:
    fleet = ("simulate", "--seed", "3", "--jobs", "6", "--days", "2")
    assert mpg(envs, *fleet, "--out", tmp_path / "installed").returncode == 0
    assert run_mpg(*fleet, "--out", tmp_path / "checkout").returncode == 0
    assert _files(tmp_path / "installed") == _files(tmp_path / "checkout")


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_each_import_writes_what_the_checkout_writes(
    envs: Environments, name: str, tmp_path: Path
) -> None:
    theirs = mpg(envs, "import", name, *IMPORTS[name], "--out", tmp_path / "installed")
    assert theirs.returncode == 0, theirs.stderr
    ours = run_mpg("import", name, *IMPORTS[name], "--out", tmp_path / "checkout")
    assert ours.returncode == 0, ours.stderr
    assert theirs.stdout.replace("installed", "OUT") == ours.stdout.replace("checkout", "OUT")
    written = _files(tmp_path / "installed")
    assert written
    assert written == _files(tmp_path / "checkout")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("import", "xplane", XPLANE, "--job-id", "mlp", "--chips", "2"),
            "counting FLOPs from an xplane's HLO needs jax (pip install "
            "'mpg-fleet-goodput[xla]'); or give --cost-analysis FILE",
        ),
        (
            ("run", "--traces", SAMPLE, "--runner=DataflowRunner", "--project=p", "--region=r",
             "--temp_location=gs://b/t"),
            "--runner=DataflowRunner needs Beam's Google Cloud extras: "
            "pip install 'mpg-fleet-goodput[dataflow]'",
        ),
    ],
    ids=["xla", "dataflow"],
)  # fmt: skip
def test_a_missing_extra_is_named_in_one_line(
    envs: Environments, args: tuple[str | Path, ...], message: str, tmp_path: Path
) -> None:
    result = mpg(envs, *args, "--out", tmp_path / "out")
    assert (result.returncode, result.stderr) == (2, f"mpg: error: {message}\n")


def test_the_worker_package_pins_the_launchers_versions(envs: Environments) -> None:
    """The requirements mpg ships are what the launcher runs with (Beam at its version, for a
    worker built without Beam's container), and the worker environment
    built from them alone (with Beam) is consistent; it runs this checkout's code version, from
    the shipped wheel, and has none of the development tools."""
    pins = set(envs.requirements.read_text().splitlines())
    assert pins <= set(freeze(envs.launcher))
    assert f"apache-beam=={metadata.version('apache-beam')}" in pins
    assert not any(p.lower().startswith("pytest==") for p in pins)
    pip(envs.worker, "check")
    code = (
        "import importlib.util as u; from mpg.core.version import code_version; "
        f"print(code_version(), [m for m in {DEV_ONLY!r} if u.find_spec(m)])"
    )
    assert run(envs.bin("worker", "python"), "-c", code).strip() == f"{code_version()} []"


@pytest.fixture
def worker_pool(envs: Environments) -> Iterator[tuple[str, str]]:
    """Beam's job service from the launcher's environment and a worker pool from the worker's
    (it starts each worker as `python` from its PATH): (job endpoint, pool address)."""
    pool, jobs = free_port(), free_port()
    path = f"{envs.worker / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    with tempfile.TemporaryFile() as log:
        workers = subprocess.Popen(
            [envs.bin("worker", "python"), "-m", "apache_beam.runners.worker.worker_pool_main",
             f"--service_port={pool}"],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PATH": path},
            cwd=tempfile.gettempdir(),
        )  # fmt: skip
        service = subprocess.Popen(
            [envs.bin("launcher", "python"), "-m",
             "apache_beam.runners.portability.local_job_service_main", "--port", str(jobs)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir(),
        )  # fmt: skip
        try:
            wait_for_port(pool, workers)
            wait_for_port(jobs, service)
            yield f"localhost:{jobs}", f"localhost:{pool}"
        finally:
            stop(service)
            stop(workers)


def test_workers_from_the_shipped_package_run_every_step(
    envs: Environments, worker_pool: tuple[str, str], published: tuple[Path, Path], tmp_path: Path
) -> None:
    """A portable run whose every step (ingest, the job buckets' update and accounting, the day
    merges, the source suites) runs in the worker environment publishes what the launcher's own
    in-process run published."""
    job_endpoint, pool = worker_pool
    portable = mpg(
        envs, "run", "--traces", SAMPLE, "--out", tmp_path / "out", "--runner=PortableRunner",
        f"--job_endpoint={job_endpoint}", "--environment_type=EXTERNAL",
        f"--environment_config={pool}",
    )  # fmt: skip
    assert portable.returncode == 0, portable.stderr
    installed, _ = published
    assert published_state(tmp_path / "out", skip=PER_RUN) == published_state(
        installed, skip=PER_RUN
    )


def test_the_xla_extra_counts_flops_without_a_sidecar(envs: Environments, tmp_path: Path) -> None:
    """Last: adds `[xla]` to the launcher for this test, then removes what it added."""
    before = set(freeze(envs.launcher))
    wheel = envs.shipped_wheel
    try:
        pip(envs.launcher, "install", "-c", ROOT / "constraints.txt", f"{wheel}[xla]")
        args = ("import", "xplane", XPLANE, "--job-id", "mlp", "--chips", "2")
        theirs = mpg(envs, *args, "--out", tmp_path / "installed")
        assert theirs.returncode == 0, theirs.stderr
        assert run_mpg(*args, "--out", tmp_path / "checkout").returncode == 0
        assert _files(tmp_path / "installed") == _files(tmp_path / "checkout")
    finally:
        added = [line.split("==")[0] for line in set(freeze(envs.launcher)) - before]
        if added:
            pip(envs.launcher, "uninstall", "--yes", *added)
