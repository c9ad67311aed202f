"""`mpg run` on object storage, end to end: trace root and output folder on `gs://`
(fake-gcs-server) and `s3://` (moto), started by the tests on 127.0.0.1, with Beam's workers in
other processes, every published table equal to a local run's, read back as a user would
(`mpg sql`).

The stores are busy: the runs with two worker processes go through the fault-injecting proxy
(tests/support/fault_proxy.py), which answers a share of requests with 503 or 429, resets
connections, loses answers, delays them, and refuses everything for a few seconds; the clients'
retries carry the run through, and its standard error shows what an in-process run's does. A
write that cannot succeed (every upload session lost) ends the run with one line naming it, exit
2, no worker aborted and the previous tables current. A run killed while the store is failing,
then run again on a healthy store, ends where an uninterrupted run does.

gcp-storage-emulator is not used here: it is reliable in one process only
(tests/support/emulators.py).
Beam's own I/O is not used (mpg reads and writes through `mpg.storage`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpg.simulate import simulate
from mpg.storage import TRANSIENT, Storage
from tests.support.cli import run_mpg
from tests.support.emulators import FaultyStore, ObjectStore, free_port, stop, wait_for_port
from tests.support.files import SPEC_EXAMPLES
from tests.support.snapshots import PER_RUN, current_run, published_state

TWO_WORKERS = ("--direct_running_mode=multi_processing", "--direct_num_workers=2")
# A busy store: a share of the requests fail in one of the ways real stores fail. Each costs a
# client's back-off (about a second on GCS), so the share is kept to what a small fleet's ~1,000
# requests make a few dozen faults of.
BUSY = {"rate": 0.03, "kinds": ["503", "429", "reset", "lost-reply", "slow"], "slow_s": 0.2}
# An outage in the middle of a run: everything refused this long.
OUTAGE_S = 2.0
TINY = SPEC_EXAMPLES / "tiny"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated fleet (gzip, duplicates, malformed lines, restarts)."""
    traces = tmp_path_factory.mktemp("fleet") / "traces"
    simulate(seed=11, jobs=12, days=2, out=traces)
    return traces


@pytest.fixture(scope="module")
def local(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list, str]:
    """What a local run over the fleet, in one process, publishes, its record counts as
    `mpg sql` prints them, and its standard error (progress shown)."""
    out = tmp_path_factory.mktemp("local") / "out"
    run = _process("run", "--traces", str(fleet), "--out", str(out), progress="plain")
    _, stderr = run.communicate()
    assert run.returncode == 0, stderr
    return published_state(out, skip=PER_RUN), _counts(str(out)), stderr


def _counts(out: str) -> list[dict]:
    query = "select source, records_read, accepted, duplicates, quarantined from record_counts"
    done = run_mpg("sql", "--out", out, "--json", f"{query} order by source")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _upload(fleet: Path, root: str) -> str:
    """The fleet's trace files under `root`/traces, bytes as they are (gzip stays gzip)."""
    traces = Storage(f"{root}/traces")
    for path in sorted(fleet.rglob("*.jsonl*")):
        traces.write_bytes(path.relative_to(fleet).as_posix(), path.read_bytes())
    return traces.uri


def _process(*args: str, progress: str = "none") -> subprocess.Popen[str]:
    """`mpg` in a process of its own (and process group, which a kill takes whole, as a
    scheduler's does): what it and its workers write reaches real descriptors, as a user's
    terminal would, not a Python stream."""
    return subprocess.Popen(
        [sys.executable, "-m", "mpg.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MPG_PROGRESS": progress},
        start_new_session=True,
    )


def _timeless(stderr: str) -> list[str]:
    """Progress lines without their figures (times, rates)."""
    return [re.sub(r"\d[\d,.]*", "N", line) for line in stderr.splitlines()]


@pytest.mark.parametrize("backend", ["faulty_gcs", "faulty_s3"])
def test_runs_with_two_worker_processes_on_a_failing_store(
    backend: str, request: pytest.FixtureRequest, fleet: Path, local: tuple[dict, list, str]
) -> None:
    """A busy store, with an outage once the workers write: the clients' retries carry the run,
    which publishes what a local one does, its standard error an in-process run's (no worker
    logs, no stray lines). Then a new trace file, and every upload session lost once the
    workers write: exit 2, one line saying which write failed and that a rerun can be expected
    to pass, no worker aborted, the tables of the first run still current."""
    store: FaultyStore = request.getfixturevalue(backend)
    with store.activated():
        root = store.root(f"two-workers-{time.time_ns()}")
        traces, out = _upload(fleet, root), f"{root}/out"
        store.faults(reset_counts=True, **BUSY)
        run = _process("run", "--traces", traces, "--out", out, *TWO_WORKERS, progress="plain")
        _wait_for_phase(out, ".mpg/staging", run)
        store.faults(refuse_s=OUTAGE_S)
        _, stderr = run.communicate()
        injected = store.faults(rate=0.0)["injected"]
        assert run.returncode == 0, stderr
        assert injected["refused"] and sum(injected.values()) >= 10, injected
        assert _timeless(stderr) == _timeless(local[2])
        assert published_state(out, skip=PER_RUN) == local[0]
        assert _counts(out) == local[1]
        assert "up to date" in run_mpg("run", "--traces", traces, "--out", out).stdout

        _upload(TINY, root)  # one more file of each source: work for the next run
        run = _process("run", "--traces", traces, "--out", out, *TWO_WORKERS)
        _wait_for_phase(out, ".mpg/staging", run)
        with store.injecting(lose_uploads=True):
            _, stderr = run.communicate()
        assert run.returncode == 2, stderr
        # One line: a worker that aborted would add Beam's "Worker subprocess exited with return
        # code 134" (its own last words go to the run's log).
        assert len(stderr.splitlines()) == 1, stderr
        (line,) = stderr.splitlines()
        assert re.fullmatch(
            rf"mpg: error: writing {re.escape(out)}/\S+: the storage service lost the upload "
            rf"session \(HTTP 404 to it\); {TRANSIENT}",
            line,
        ), line
        assert published_state(out, skip=PER_RUN) == local[0]


@pytest.fixture(scope="module")
def worker_pool(fake_gcs: ObjectStore) -> Iterator[str]:
    """Beam's worker pool (the workers of Flink, Spark or a Dataflow-like service: processes of
    their own that the runner hands bundles to) and Beam's local job service, both started with
    the emulator's environment; yields the job endpoint and the pool's address."""
    pool, jobs = free_port(), free_port()
    # The pool starts each worker as `python -c ...`: this interpreter's, which has mpg.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    with fake_gcs.activated():
        workers = subprocess.Popen(
            [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
             f"--service_port={pool}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "PATH": path},
        )  # fmt: skip
        service = subprocess.Popen(
            [sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
             "--port", str(jobs)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    try:
        wait_for_port(pool, workers)
        wait_for_port(jobs, service)
        yield f"localhost:{jobs} localhost:{pool}"
    finally:
        stop(service)
        stop(workers)


def test_a_portable_run_with_an_external_worker_pool_publishes_what_a_local_one_does(
    fake_gcs: ObjectStore, worker_pool: str, fleet: Path, local: tuple[dict, list, str]
) -> None:
    job_endpoint, pool = worker_pool.split()
    with fake_gcs.activated():
        root = fake_gcs.root(f"portable-{time.time_ns()}")
        traces, out = _upload(fleet, root), f"{root}/out"
        done = run_mpg(
            "run", "--traces", traces, "--out", out, "--runner=PortableRunner",
            f"--job_endpoint={job_endpoint}", "--environment_type=EXTERNAL",
            f"--environment_config={pool}",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert published_state(out, skip=PER_RUN) == local[0]


def _start(traces: str, out: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mpg.cli", "run", "--traces", traces, "--out", out],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for_phase(out: str, prefix: str, process: subprocess.Popen) -> None:
    """Until the run has written something under `prefix` of the output folder."""
    store = Storage(out)
    while process.poll() is None and not store.list(prefix):
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("phase", "failing"),
    [(".mpg/staging", True), ("state", False)],
    ids=["early-on-a-failing-store", "at-the-switch"],
)
def test_a_run_killed_on_object_storage_leaves_old_or_new_tables_and_a_rerun_completes_it(
    phase: str, failing: bool, faulty_gcs: FaultyStore, fleet: Path, local: tuple[dict, list, str]
) -> None:
    """A run killed once it writes scratch (two worker processes on a busy store, the run's
    process group killed), or state (in one process, as it switches): readers see the previous
    snapshot (the tiny example's) or the new one, and a rerun on a healthy store publishes what
    an uninterrupted run does."""
    with faulty_gcs.activated():
        root = faulty_gcs.root(f"killed-{time.time_ns()}")
        traces, out = _upload(fleet, root), f"{root}/out"
        assert run_mpg("run", "--traces", _upload(TINY, f"{root}/t"), "--out", out).returncode == 0
        old = published_state(out, skip=PER_RUN)
        store = Storage(out)
        before = {e.path for e in store.list(phase)}
        workers = TWO_WORKERS if failing else ()
        with faulty_gcs.injecting(**(BUSY if failing else {})):
            process = _process("run", "--traces", traces, "--out", out, *workers)
            while process.poll() is None and not ({e.path for e in store.list(phase)} - before):
                time.sleep(0.05)
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
        assert published_state(out, skip=PER_RUN) in (old, local[0])
        rerun = run_mpg("run", "--traces", traces, "--out", out)
        assert rerun.returncode == 0, rerun.stderr
        assert published_state(out, skip=PER_RUN) == local[0]
        assert store.list(".mpg/staging") == []


def test_a_reader_during_a_run_on_object_storage_sees_old_or_new_tables(
    fake_gcs: ObjectStore, fleet: Path, local: tuple[dict, list, str]
) -> None:
    with fake_gcs.activated():
        root = fake_gcs.root(f"reader-{time.time_ns()}")
        traces, out = _upload(fleet, root), f"{root}/out"
        assert run_mpg("run", "--traces", _upload(TINY, f"{root}/t"), "--out", out).returncode == 0
        old = published_state(out, skip=PER_RUN)
        process = _start(traces, out)
        seen = []
        while process.poll() is None:
            state = published_state(out, skip=PER_RUN)
            assert state in (old, local[0])
            seen.append(state == local[0])
        assert process.returncode == 0
        assert seen and seen[0] is False  # the reader did read during the run


def test_a_second_writer_on_object_storage_is_refused_in_one_line(
    fake_gcs: ObjectStore, fleet: Path
) -> None:
    with fake_gcs.activated():
        root = fake_gcs.root(f"writers-{time.time_ns()}")
        traces, out = _upload(fleet, root), f"{root}/out"
        first = _start(traces, out)
        _wait_for_phase(out, ".mpg/staging", first)
        second = run_mpg("run", "--traces", traces, "--out", out)
        assert first.wait() == 0
        assert second.returncode == 2
        (line,) = second.stderr.splitlines()
        lock = Storage(out).uri_of(".mpg/lock")
        assert line.startswith(f"mpg: error: {lock} is held by run "), line
        assert line.endswith("wait for that run to finish (or, if it was killed, for its lease "
                             "to expire)")  # fmt: skip
        assert current_run(out)


ML_GOODPUT = Path(__file__).parent / "fixtures" / "adapters" / "ml-goodput"


def _files(storage: Storage) -> dict[str, bytes]:
    return {e.path: storage.read_bytes(e.path) for e in storage.list()}


@pytest.mark.parametrize("backend", ["gcs_emulator", "moto_s3"])
def test_simulate_and_import_write_object_storage_as_they_write_a_folder(
    backend: str, request: pytest.FixtureRequest, fleet: Path, tmp_path: Path
) -> None:
    """`mpg simulate` and `mpg import` through mpg.storage: the same bytes on `gs://` and `s3://`
    as in a folder; an import reads its inputs there too, and names them by their URIs."""
    store: ObjectStore = request.getfixturevalue(backend)
    with store.activated():
        root = store.root(f"writers-{time.time_ns()}")
        fleet_args = ("simulate", "--seed", "11", "--jobs", "12", "--days", "2", "--out")
        assert run_mpg(*fleet_args, f"{root}/fleet").returncode == 0
        assert _files(Storage(f"{root}/fleet")) == _files(Storage(fleet))
        again = run_mpg(*fleet_args, f"{root}/fleet")
        assert (again.returncode, again.stderr) == (
            2,
            f"mpg: error: {root}/fleet/scheduler already holds trace files; remove them first\n",
        )

        logs = {p.name: p.read_bytes() for p in sorted(ML_GOODPUT.glob("*.jsonl"))}
        logs["broken.jsonl"] = b"not json\n"
        for name, data in logs.items():
            Storage(f"{root}/logs").write_bytes(f"jobs/{name}", data)
            (tmp_path / "logs" / "jobs").mkdir(parents=True, exist_ok=True)
            (tmp_path / "logs" / "jobs" / name).write_bytes(data)
        options = ("--chips", "4", "--chip-generation", "tpu-v5e")
        remote = run_mpg("import", "ml-goodput", f"{root}/logs", "--out", f"{root}/t", *options)
        local = run_mpg(
            "import", "ml-goodput", tmp_path / "logs", "--out", tmp_path / "t", *options
        )
        assert (remote.returncode, local.returncode) == (0, 0), remote.stderr
        assert remote.stdout.splitlines()[0] == local.stdout.splitlines()[0]
        written, expected = _files(Storage(f"{root}/t")), _files(Storage(tmp_path / "t"))
        (quarantine,) = [p for p in written if p.startswith("quarantine/")]
        assert {p: b for p, b in written.items() if p != quarantine} == {
            p: b for p, b in expected.items() if not p.startswith("quarantine/")
        }
        (row,) = [json.loads(line) for line in written[quarantine].decode().splitlines()]
        assert row["file"] == f"{root}/logs/jobs/broken.jsonl"
