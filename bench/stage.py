"""One benchmark stage in its own process tree, measured from outside.

    python bench/stage.py run TRACES OUT [--full] [BEAM OPTIONS...]   # `mpg run`
    python bench/stage.py backfill OUT VERSION FROM TO                # `mpg backfill`
    python bench/stage.py crosscheck TRACES RESULT                    # the one DuckDB query
    python bench/stage.py import FORMAT SRC ROOT ...                  # `mpg import FORMAT SRC ...`

`measure(args)` starts one of these as a child process and samples the resident memory of the
child and all its descendants (Beam's worker processes included) every 20 ms from /proc, so the
peak is the whole process tree's, not one process's. The child prints one JSON line: what the
stage did (the run's plan, files parsed, days changed).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and every descendant, from /proc (0 once it is gone)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            total += int((Path("/proc") / str(current) / "statm").read_text().split()[1]) * _PAGE
        todo.extend(children.get(current, []))
    return total


def measure(args: list[str]) -> dict:
    """Run a stage in a child process; its seconds, the process tree's peak memory (MiB) and
    what the stage printed."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, __file__, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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
    details = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
    return {"seconds": seconds, "peak_mib": peak / 2**20, **details}


def _run(traces: str, out: str, *flags: str) -> dict:
    from mpg.pipelines.options import DEFAULT_BEAM_ARGS, RunOptions
    from mpg.pipelines.run import run

    beam = tuple(f for f in flags if f != "--full") or DEFAULT_BEAM_ARGS
    result = run(RunOptions(traces=traces, out=out, full="--full" in flags, beam_args=beam))
    return {
        "plan": result.plan,
        "parsed": result.parsed,
        "changed_days": len({d for _, d in result.changed_days}),
    }


def _backfill(out: str, version: str, first: str, last: str) -> dict:
    from mpg.pipelines.backfill import BackfillOptions, backfill

    days = datetime.date.fromisoformat(first), datetime.date.fromisoformat(last)
    results = backfill(BackfillOptions(out, version, *days))
    return {
        "plan": "; ".join(r.plan for r in results),
        "parsed": 0,
        "changed_days": len({d for r in results for _, d in r.changed_days}),
    }


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


STAGES = {"run": _run, "backfill": _backfill, "crosscheck": _crosscheck, "import": _import}


if __name__ == "__main__":
    os.environ.setdefault("MPG_PROGRESS", "none")
    print(json.dumps(STAGES[sys.argv[1]](*sys.argv[2:])))
