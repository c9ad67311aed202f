"""Shared fixtures: the spec's worked examples (copied from the spec into tests/fixtures, since
the project must not read ../shared at test time), a helper that runs the real `mpg` CLI, a
local BigQuery emulator and object-store emulators (each started once, by the first test that
asks for it; tests/emulators.py)."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpg.cli import main
from mpg.storage import Storage
from tests import emulators
from tests.bigquery_emulator import Emulator, running_emulator
from tests.racers import Crew

FIXTURES = Path(__file__).parent / "fixtures"
SPEC_EXAMPLES = FIXTURES / "spec_examples"

# Commands show no progress in tests, session fixtures' runs included: stderr holds only what
# tests assert. tests/test_progress.py asks for it (`env=` below, or its own reporter).
os.environ["MPG_PROGRESS"] = "none"


# The end-to-end tier: modules that publish fleets through the whole pipeline or start emulators,
# worker processes or a browser. `make test-fast` leaves them out (the inner loop, under two
# minutes); `make test` runs every tier.
END_TO_END = frozenset(
    {
        "test_adapter_alibaba_gpu_v2023", "test_adapter_kubernetes", "test_adapter_ml_goodput",
        "test_adapter_philly", "test_adapter_pytorch", "test_adapter_slurm", "test_adapter_xplane",
        "test_analyst_objects", "test_backfill", "test_bigquery", "test_cli", "test_compare",
        "test_costs", "test_current_views", "test_examples", "test_explain", "test_faults",
        "test_fuzz", "test_import_quarantine", "test_incremental", "test_incremental_orders",
        "test_one_number", "test_object_storage", "test_pipeline_vs_sql", "test_progress",
        "test_quality", "test_reference", "test_report", "test_report_analyses",
        "test_report_browser", "test_report_sections", "test_run_validation", "test_runners",
        "test_sql_command", "test_storage", "test_storage_lock", "test_teams",
    }
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in END_TO_END:
            item.add_marker(pytest.mark.slow)


def run_mpg(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process (`mpg.cli.main`), its output captured as a subprocess's
    would be: exit code, stdout, stderr (`env` adds variables for the call). A new interpreter
    per call cost ~2 s of imports and proved nothing more; tests of what only a process shows
    (start-up time, signals, kills, a shell on stdin) start one themselves."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    terminate = signal.getsignal(signal.SIGTERM)  # main() installs its own handler
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's errors and --help
            code = _exit_code(exc)
        except Exception:  # a bug: the traceback on stderr and 1, as the interpreter does
            traceback.print_exc()
            code = 1
        finally:
            signal.signal(signal.SIGTERM, terminate)
    return subprocess.CompletedProcess(["mpg", *argv], code, out.getvalue(), err.getvalue())


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _environment(env: dict[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def read_expected(path: Path) -> list[dict[str, str | None]]:
    """An expected-output CSV: an empty cell is NULL."""
    with path.open(newline="") as f:
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(f)]


@pytest.fixture(params=["tiny", "edges"])
def spec_example(request: pytest.FixtureRequest) -> Path:
    return SPEC_EXAMPLES / request.param


@pytest.fixture(scope="session")
def bigquery_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with running_emulator(tmp_path_factory.mktemp("bqemulator")) as emulator:
        yield emulator


# Object stores. Each yields an `emulators.ObjectStore`; a test points clients at one with
# `with store.activated():` (both GCS emulators answer to STORAGE_EMULATOR_HOST, so none is set
# for the whole session).


@pytest.fixture(scope="session")
def gcs_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[emulators.ObjectStore]:
    """gcp-storage-emulator: Beam's gcsio works on it; it ignores preconditions."""
    with emulators.gcp_storage_emulator(tmp_path_factory.mktemp("gcs-emulator")) as store:
        yield store


@pytest.fixture(scope="session")
def fake_gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[emulators.ObjectStore]:
    """fake-gcs-server: honours generation preconditions on simple uploads; no batch endpoint."""
    with emulators.fake_gcs_server(tmp_path_factory.mktemp("fake-gcs")) as store:
        yield store


@pytest.fixture(scope="session")
def moto_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[emulators.ObjectStore]:
    """moto's S3 server: honours If-Match / If-None-Match."""
    with emulators.moto_server(tmp_path_factory.mktemp("moto")) as store:
        yield store


@pytest.fixture(scope="session")
def crew() -> Iterator[Crew]:
    """Three processes that race each other (conditional writes, leases) on any backend."""
    with Crew(3) as members:
        yield members


@pytest.fixture(params=emulators.ALL)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    """An empty Storage root on each backend: local, gcp-storage-emulator, fake-gcs-server, moto."""
    with emulators.rooted(request, tmp_path, request.param) as storage:
        yield storage


@pytest.fixture(params=emulators.REMOTE)
def remote_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    """The same, on the object-store emulators only."""
    with emulators.rooted(request, tmp_path, request.param) as storage:
        yield storage


@pytest.fixture(params=emulators.RACING)
def racing_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    """The same, on the backends that honour preconditions (gcp-storage-emulator skipped)."""
    with emulators.rooted(request, tmp_path, request.param) as storage:
        yield storage
