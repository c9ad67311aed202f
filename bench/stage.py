"""One benchmark stage in its own process, so that its peak memory is its own.

    python bench/stage.py run TRACES OUT [--full]     # `mpg run` (first, daily or full)
    python bench/stage.py backfill OUT VERSION FROM TO # `mpg backfill`
    python bench/stage.py crosscheck OUT              # job-day chip-time by one DuckDB query
    python bench/stage.py import FORMAT SRC ROOT ...  # `mpg import FORMAT SRC --out ROOT ...`

Prints one JSON line: seconds, peak resident memory (VmHWM) of this process, and what the stage
did (the run's plan, how many files it parsed, on how many days the job tables changed).
"""

from __future__ import annotations

import datetime
import json
import resource
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from mpg.pipelines.backfill import BackfillOptions, backfill
from mpg.pipelines.options import DEFAULT_BEAM_ARGS, RunOptions
from mpg.pipelines.publish import PublishedRun
from mpg.pipelines.run import run
from mpg.sqlfiles import load_sql

BUCKETS = 64


def _described(results: list[PublishedRun]) -> dict:
    return {
        "plan": "; ".join(r.plan for r in results),
        "parsed": sum(r.parsed for r in results),
        "changed_days": len({d for r in results for _, d in r.changed_days}),
    }


def _run(traces: str, out: str, *flags: str) -> dict:
    opts = RunOptions(
        traces=Path(traces),
        out=Path(out),
        buckets=BUCKETS,
        full="--full" in flags,
        beam_args=DEFAULT_BEAM_ARGS,
    )
    return _described([run(opts)])


def _backfill(out: str, version: str, first: str, last: str) -> dict:
    days = datetime.date.fromisoformat(first), datetime.date.fromisoformat(last)
    return _described(backfill(BackfillOptions(Path(out), version, *days)))


def _crosscheck(out: str) -> dict:
    current = Path(out) / ".mpg" / "current"
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        table = con.sql(
            load_sql("crosscheck/job_day_chip_time.sql"),
            params={"records": str(current / "records")},
        ).to_arrow_table()
    pq.write_table(table, Path(out).parent / "crosscheck.parquet")
    return {}


def _import(fmt: str, src: str, root: str, *options: str) -> dict:
    from mpg.cli import main as mpg

    mpg(["import", fmt, src, "--out", root, *options])
    return {}


def _peak_kib() -> int:
    """This process's peak resident memory. Not getrusage's ru_maxrss: on Linux that survives
    exec, so a child would report its parent's peak; VmHWM belongs to this address space."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


STAGES = {"run": _run, "backfill": _backfill, "crosscheck": _crosscheck, "import": _import}


def main(stage: str, *args: str) -> None:
    started = time.perf_counter()
    details = STAGES[stage](*args)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peak_mib": _peak_kib() / 1024, **details}))


if __name__ == "__main__":
    main(*sys.argv[1:])
