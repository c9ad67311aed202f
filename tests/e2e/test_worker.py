"""Beam worker processes end cleanly: a process that exits while one of mpg's steps still runs
DuckDB on another thread (what a worker does when its runner stops it after a failure
elsewhere) is aborted by CPython 3.11's finalization (exit 134) unless `mpg.pipelines.worker`'s
exit hook, installed in every worker as a Beam plugin, ends it first."""

from __future__ import annotations

import subprocess
import sys

import pytest

# A step (a function of an `mpg.` module) running a long DuckDB query on a daemon thread while
# the main thread ends: a worker harness returning with a bundle still in flight.
_EXIT_DURING_A_STEP = """
import sys, threading, time, types
if sys.argv[1] == "hooked":
    from mpg.pipelines import worker
    worker.install()
step = types.ModuleType("mpg.some_step")
exec('''
import duckdb
def account():
    duckdb.connect().execute("select count(*) from range(10000000000) t(i) where i % 7 = 3")
''', step.__dict__)
thread = threading.Thread(target=step.account, daemon=True)
thread.start()
time.sleep(0.5)
print("harness done", flush=True)
"""


@pytest.mark.parametrize(("hook", "code"), [("bare", -6), ("hooked", 0)])
def test_a_worker_that_exits_during_a_step_ends_without_aborting(hook: str, code: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_DURING_A_STEP, hook], capture_output=True, text=True
    )
    assert done.stdout == "harness done\n"
    assert done.returncode == code, done.stderr
    assert ("FATAL: exception not rethrown" in done.stderr) == (hook == "bare")
