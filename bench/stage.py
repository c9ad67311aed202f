"""One benchmark stage in its own process tree, measured from outside.

    python bench/stage.py run TRACES OUT [--full] [BEAM OPTIONS...]   # `mpg run`
    python bench/stage.py backfill OUT VERSION FROM TO                # `mpg backfill`
    python bench/stage.py crosscheck TRACES RESULT                    # the one DuckDB query
    python bench/stage.py import FORMAT SRC ROOT ...                  # `mpg import FORMAT SRC ...`

`measure(args)` starts one of these as a child process and samples the resident memory of the
child and all its descendants (Beam's worker processes included) every 20 ms from /proc, so the
peak is the whole process tree's, not one process's. `run` and `backfill` are the `mpg` command
itself (`python -m mpg.cli`, as the console script runs it: start-up, the closing summary and the
way out are what a user waits for too); the stage's details are what its headline says it did.
The other stages print one JSON line of details.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int]:
    """`pid`'s child processes, from its threads' `children` lists in /proc (Linux 3.5+)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in (Path("/proc") / str(pid) / "task").iterdir():
            with contextlib.suppress(OSError):
                found.extend(int(c) for c in (task / "children").read_text().split())
    return found


def _tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and every descendant, from /proc (0 once it is gone). Only the
    tree's own files are read: scanning every process of the machine, 50 times a second, took
    a twentieth of a core from the stage it measured."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            total += int((Path("/proc") / str(current) / "statm").read_text().split()[1]) * _PAGE
        todo.extend(_children(current))
    return total


def measure(args: list[str]) -> dict:
    """Run a stage in a child process; its seconds, the process tree's peak memory (MiB) and
    what the stage printed."""
    started = time.perf_counter()
    child = subprocess.Popen(
        _command(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = 0

    def sample() -> None:
        nonlocal peak
        while child.poll() is None:
            peak = max(peak, _tree_rss(child.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    seconds = time.perf_counter() - started
    sampler.join()
    if child.returncode != 0:
        raise RuntimeError(f"stage {args[0]} failed:\n{err}")
    return {"seconds": seconds, "peak_mib": peak / 2**20, **_details(args[0], out)}


def _command(args: list[str]) -> list[str]:
    """The child's command line: the `mpg` command for `run` and `backfill`, this file for the
    others."""
    stage, *rest = args
    mpg = [sys.executable, "-m", "mpg.cli"]
    if stage == "run":
        traces, out, *flags = rest
        return [*mpg, "run", "--traces", traces, "--out", out, *flags]
    if stage == "backfill":
        out, version, first, last = rest
        return [*mpg, "backfill", "--out", out, "--metric-version", version,
                "--from", first, "--to", last]  # fmt: skip
    return [sys.executable, __file__, *args]


# What `mpg run` and `mpg backfill` say they did: "<plan>; parsed N, retracted M; job tables
# changed on D day[s] (...)" (mpg.cli.command.format_headline).
_DID = re.compile(r"^  (?P<did>.*job tables changed on (?P<days>\d+) days?).*$", re.MULTILINE)


def _details(stage: str, out: str) -> dict:
    if stage not in ("run", "backfill"):
        return json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
    said, lines = _DID.search(out), out.strip().splitlines()
    if said is None:  # up to date, or nothing to backfill
        return {"did": lines[min(1, len(lines) - 1)].strip(), "changed_days": 0}
    return {"did": said["did"], "changed_days": int(said["days"])}


def _crosscheck(traces: str, result: str) -> dict:
    import duckdb
    import pyarrow.parquet as pq

    # The query lives with the tests' other independent routes (tests/support), which are not
    # installed: the checkout is put on the path, as `PYTHONPATH=.` does for bench/parse_fleet.py.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.crosscheck import crosscheck_job_days

    with duckdb.connect() as con:
        pq.write_table(crosscheck_job_days(con, traces), result)
    return {}


def _import(fmt: str, src: str, root: str, *options: str) -> dict:
    from mpg.cli import main as mpg

    mpg(["import", fmt, src, "--out", root, *options])
    return {}


STAGES = {"crosscheck": _crosscheck, "import": _import}


if __name__ == "__main__":
    if sys.argv[1] not in STAGES:  # run, backfill: the command itself, in this process's place
        command = _command(sys.argv[1:])
        os.execv(command[0], command)
    os.environ.setdefault("MPG_PROGRESS", "none")
    print(json.dumps(STAGES[sys.argv[1]](*sys.argv[2:])))
