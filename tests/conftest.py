"""Shared fixtures and the tiers.

A test's tier is the folder it is in, never a list kept by hand: tests/unit (pure functions and
SQL on small given tables), tests/pipeline (Beam composites under TestPipeline, the steps run in
process over small fleets), tests/e2e (whole runs through the CLI, emulators, worker processes, a
browser; marked `slow`), tests/installed (the installed package, `make test-installed`). A test
module anywhere else is refused at collection. Helpers are in tests/support, data in
tests/fixtures.

The fixtures: the spec's worked examples (copied from the spec into tests/fixtures), a local
BigQuery emulator and object-store emulators (each started once, by the first test that asks for
it; tests/support/emulators.py) and processes that race each other.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpg.storage import Storage
from tests.support import emulators
from tests.support.bigquery_emulator import Emulator, running_emulator
from tests.support.files import SPEC_EXAMPLES
from tests.support.racers import Crew

# Commands show no progress in tests, session fixtures' runs included: stderr holds only what
# tests assert. tests/e2e/test_progress.py asks for it (`env=` of run_mpg, or its own reporter).
os.environ["MPG_PROGRESS"] = "none"

TESTS = Path(__file__).parent
# Each tier's folder and the markers its tests get: `make test-fast` runs tests/unit and
# tests/pipeline (the inner loop), `make test` every tier but tests/installed.
TIERS: dict[str, tuple[str, ...]] = {
    "unit": ("unit",),
    "pipeline": ("pipeline",),
    "e2e": ("e2e", "slow"),
    "installed": ("installed", "slow"),
}


def tier_of(path: Path) -> str | None:
    """The tier of a test file: the folder under tests/ it is in (None outside every tier's)."""
    parts = path.relative_to(TESTS).parts
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_kept_apart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Temporary files of the tests and of every process they start go under pytest's own
    folder (which it prunes), not into the machine's /tmp: Beam makes a `beam-pipeline-temp*`
    folder for each pipeline and removes it only when the pipeline runs to its end, so the runs
    the tests kill and the graphs they only build left about 80 empty folders in /tmp per
    `make test`."""
    folder = str(tmp_path_factory.mktemp("tmp"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", folder)  # processes the tests start
        patch.setattr(tempfile, "tempdir", folder)  # this one, whatever it found before
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    ours = [i for i in items if i.path.is_relative_to(TESTS)]
    misplaced = sorted({str(i.path.relative_to(TESTS.parent)) for i in ours if not tier_of(i.path)})
    if misplaced:
        folders = ", ".join(f"tests/{t}" for t in TIERS)
        raise pytest.UsageError(f"test modules outside a tier's folder ({folders}): {misplaced}")
    for item in ours:
        for marker in TIERS[tier_of(item.path)]:
            item.add_marker(marker)


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
def faulty_gcs(
    fake_gcs: emulators.ObjectStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[emulators.FaultyStore]:
    """fake-gcs-server behind the fault-injecting proxy (tests/support/fault_proxy.py)."""
    with emulators.faulty(fake_gcs, tmp_path_factory.mktemp("faulty-gcs")) as store:
        yield store


@pytest.fixture(scope="session")
def faulty_s3(
    moto_s3: emulators.ObjectStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[emulators.FaultyStore]:
    """moto's S3 behind the fault-injecting proxy (tests/support/fault_proxy.py)."""
    with emulators.faulty(moto_s3, tmp_path_factory.mktemp("faulty-s3")) as store:
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
