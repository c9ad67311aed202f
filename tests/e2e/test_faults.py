"""Faults: `mpg run` killed with SIGKILL at every phase, a full disk, two runs at once.

The campaign runs the real CLI in a subprocess over `data/sample_traces`, into an output folder
that already holds another input's tables, and kills it once it reaches a phase (found from the
files the run creates) plus a random delay drawn from a seeded generator. After each kill the
published state must be exactly the previous run's or exactly the new one's; the rerun must then
publish, byte for byte, what an uninterrupted run publishes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import run_mpg
from tests.support.files import SAMPLE_TRACES, SPEC_EXAMPLES
from tests.support.snapshots import published_state

SAMPLE = SAMPLE_TRACES
# Files that appear as a run moves through its phases (glob under the output folder).
PHASES = {
    "starting": "runs/*.json",
    "ingesting": ".mpg/staging/*/parsed",
    "accounting": ".mpg/staging/*/days",
    "making the database": ".mpg/staging/*/mpg.duckdb",  # beside the pipeline
    "committing the tables": "tables/*/metadata/*.metadata.json",  # publishing
    "switching": "state/*/snapshot.json",  # the snapshot is written; current.json may not name it
}


def runs(out: Path) -> dict[str, str]:
    return {
        r["run_id"]: r["outcome"]
        for r in (json.loads(p.read_text()) for p in (out / "runs").glob("*.json"))
    }


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated fleet: every phase of a run, with little time spent in each."""
    traces = tmp_path_factory.mktemp("fleet") / "traces"
    args = ("--seed", "11", "--jobs", "12", "--days", "2", "--out", traces)
    assert run_mpg("simulate", *args).returncode == 0
    return traces


@pytest.fixture(scope="module")
def baseline(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """An output folder holding the tiny example's tables, and the fleet's uninterrupted state."""
    root = tmp_path_factory.mktemp("baseline")
    previous = root / "previous"
    assert run_mpg("run", "--traces", SPEC_EXAMPLES / "tiny", "--out", previous).returncode == 0
    full = root / "full"
    assert run_mpg("run", "--traces", fleet, "--out", full).returncode == 0
    return previous, published_state(full)


def _start_run(traces: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mpg.cli", "run", "--traces", str(traces), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(out: Path, pattern: str, process: subprocess.Popen[bytes], before: set[str]) -> None:
    while process.poll() is None:
        with contextlib.suppress(FileNotFoundError):  # the run is creating and removing folders
            if {str(p) for p in out.glob(pattern)} - before:
                return
        time.sleep(0.001)


@pytest.mark.parametrize("seed", range(len(PHASES)))
def test_a_run_killed_at_any_phase_leaves_old_or_new_tables_and_a_rerun_completes_it(
    seed: int, fleet: Path, baseline: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    previous, full = baseline
    out = tmp_path / "out"
    shutil.copytree(previous, out)
    old = published_state(out)
    phase = list(PHASES)[seed]
    before = {str(p) for p in out.glob(PHASES[phase])}

    process = _start_run(fleet, out)
    _wait_for(out, PHASES[phase], process, before)
    time.sleep(random.Random(seed).uniform(0, 0.05))
    process.send_signal(signal.SIGKILL)
    process.wait()

    assert published_state(out) in (old, full), f"a mix was visible after a kill while {phase}"
    killed = set(runs(out)) - set(runs(previous))
    rerun = run_mpg("run", "--traces", fleet, "--out", out)
    assert rerun.returncode == 0, rerun.stderr
    assert published_state(out) == full
    # the killed run is on record: interrupted, or published if it got past the switch
    outcomes = runs(out)
    assert [outcomes[r] for r in killed] in (["interrupted"], ["published"])
    staging = out / ".mpg" / "staging"  # gone: a rerun that finds nothing to do makes none
    assert not staging.exists() or list(staging.iterdir()) == []


def test_a_reader_during_a_run_sees_the_old_tables_or_the_new_ones(
    fleet: Path, baseline: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    previous, full = baseline
    out = tmp_path / "out"
    shutil.copytree(previous, out)
    old = published_state(out)
    process = _start_run(fleet, out)
    seen = []
    while process.poll() is None:
        state = published_state(out)
        assert state in (old, full)
        seen.append(state == full)
    assert process.returncode == 0
    assert published_state(out) == full
    assert seen[0] is False  # the reader did read during the run


def test_a_run_is_refused_while_another_process_writes_the_folder(
    fleet: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / ".mpg").mkdir(parents=True)
    with (out / ".mpg" / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # what a running `mpg run` holds
        refused = run_mpg("run", "--traces", fleet, "--out", out)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"mpg: error: {out / '.mpg' / 'lock'} is locked by another process: wait for it to finish\n"
    )
    assert run_mpg("run", "--traces", fleet, "--out", out).returncode == 0  # the lock died with it


def test_a_copied_output_folder_is_a_folder_of_its_own(
    baseline: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Every path a snapshot names is relative to the folder, so a copy (`cp -r`, any sync
    tool) reads and runs as the original; its Iceberg tables are re-homed into the copy by the
    first run that publishes there."""
    previous, _ = baseline
    copy = tmp_path / "copy"
    shutil.copytree(previous, copy)
    assert published_state(copy) == published_state(previous)
    done = run_mpg("run", "--traces", SAMPLE, "--out", copy)
    assert done.returncode == 0, done.stderr
    from mpg.output.snapshot import read_current
    from mpg.output.store import OutputStore

    snapshot, _ = read_current(OutputStore(str(copy)))
    assert snapshot is not None
    for table, metadata in snapshot.tables.items():
        text = (copy / metadata).read_text()
        assert str(previous) not in text, table


_FULL_DISK = """
import json, os, subprocess, sys, pathlib
disk = pathlib.Path(sys.argv[1])
out = disk / "out"
def mpg(traces, *beam):
    return subprocess.run([sys.executable, "-m", "mpg.cli", "run", "--traces", traces,
                           "--out", str(out), *beam], capture_output=True, text=True)
first = mpg(sys.argv[2])
before = (out / "mpg.duckdb").read_bytes()
ballast = disk / "ballast"
with ballast.open("wb", buffering=0) as f:  # fill the disk, then free 200 KiB
    try:
        while True:
            f.write(bytes(65536))
    except OSError:
        pass
os.truncate(ballast, ballast.stat().st_size - 200 * 1024)
# on worker threads, as runs of two buckets or more go: the error crosses from a thread
second = mpg(sys.argv[3], "--direct_num_workers=2", "--direct_running_mode=multi_threading")
same = (out / "mpg.duckdb").read_bytes() == before
ballast.unlink()
third = mpg(sys.argv[3])
import duckdb
with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
    runs = con.execute("select outcome, message from runs order by run_id").fetchall()
print(json.dumps({"codes": [first.returncode, second.returncode, third.returncode],
                  "stderr": second.stderr, "same": same, "runs": runs}))
"""


def test_a_full_disk_is_a_one_line_error_and_the_previous_tables_stay(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a small private tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    size = 32 * 1024 * 1024
    script = (
        f"mount -t tmpfs -o size={size} none {disk} && "
        f'"{sys.executable}" -c "$0" {disk} {SPEC_EXAMPLES / "tiny"} {SAMPLE}'
    )
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, _FULL_DISK],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 and "mount" in result.stderr:
        pytest.skip(f"cannot mount a private tmpfs here: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    assert report["codes"] == [0, 2, 0]
    lines = report["stderr"].splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"mpg: error: No space left on device: {disk}/out/")
    assert report["same"] is True  # the first run's tables stayed published
    (published, _), (failed, message), (last, _) = report["runs"]
    assert (published, failed, last) == ("published", "failed", "published")
    assert f"mpg: error: {message}" == lines[0]
