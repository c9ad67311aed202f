"""A local BigQuery for the tests: bqemulator 1.4.0 in a subprocess, from its own venv.

The venv (`.bqemu/`, pinned by `tests/support/bigquery/requirements.txt`) is built by `make test`;
the emulator wants pyarrow 26 and the project pins 25, so it can only run as another process. It
listens on 127.0.0.1 on a free port and keeps its data in memory; the official client reaches it
with an endpoint override and anonymous credentials, as `mpg run --bigquery-endpoint` does.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

from tests.support.emulators import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".bqemu" / "bin" / "python"
LAUNCHER = Path(__file__).parent / "bigquery" / "launch.py"
PROJECT = "test-project"
READY_WITHIN_S = 60
# The client retries a server error for ten minutes by default; an emulator's 500 is no blip.
RETRY = bigquery.DEFAULT_RETRY.with_timeout(20)


@dataclass(frozen=True)
class Emulator:
    endpoint: str
    project: str = PROJECT

    def client(self) -> bigquery.Client:
        return bigquery.Client(
            project=self.project,
            credentials=AnonymousCredentials(),
            client_options=ClientOptions(api_endpoint=self.endpoint),
        )

    def query(self, sql: str, dataset: str | None = None) -> pa.Table:
        """Rows of `sql`; unqualified tables are looked up in `dataset`."""
        config = bigquery.QueryJobConfig(
            default_dataset=f"{self.project}.{dataset}" if dataset else None
        )
        job = self.client().query(sql, job_config=config, retry=RETRY, job_retry=None)
        return job.result(retry=RETRY).to_arrow(create_bqstorage_client=False)


def _ready(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/readyz", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _wait_until_ready(process: subprocess.Popen[bytes], endpoint: str, log: Path) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while not _ready(endpoint):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"bqemulator did not start at {endpoint}:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


@contextlib.contextmanager
def running_emulator(workdir: Path) -> Iterator[Emulator]:
    """Start the emulator in `workdir` (its log is `workdir/bqemulator.log`) and stop it after."""
    if not PYTHON.exists():
        pytest.fail(f"no BigQuery emulator venv at {PYTHON.parent.parent}: run `make test`")
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = workdir / "bqemulator.log"
    command = [
        str(PYTHON),
        str(LAUNCHER),
        "start",
        "--rest-port",
        str(port),
        "--grpc-port",
        "0",
        "--ephemeral",
        "--project",
        PROJECT,
        "--log-level",
        "warning",
    ]
    # Its Avro extension would be downloaded at start: offline, that only costs time.
    env = {**os.environ, "BQEMU_ENABLE_FORMAT_EXTENSIONS": "false"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=workdir, stdout=out, stderr=out, env=env)
    try:
        _wait_until_ready(process, endpoint, log)
        yield Emulator(endpoint)
    finally:
        stop(process)
