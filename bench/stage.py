"""One benchmark stage in its own process, so that its peak memory is its own.

    python bench/stage.py ingest TRACES WORK     # files -> record store (the real ingest pipeline)
    python bench/stage.py account WORK           # record store -> job-day tables (real pipeline)
    python bench/stage.py crosscheck WORK        # the same job-day chip-time by one DuckDB query

Prints one JSON line: seconds and peak resident memory (VmHWM) of this process.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import apache_beam as beam
import duckdb
import pyarrow.parquet as pq
from apache_beam.options.pipeline_options import PipelineOptions

from mpg.pipelines.account import build_account
from mpg.pipelines.ingest import build_ingest
from mpg.pipelines.io import DEFAULT_BLOCK_BYTES, discover_trace_files, stored_buckets
from mpg.pipelines.options import DEFAULT_BEAM_ARGS
from mpg.sqlfiles import load_sql

BUCKETS = 64


def _ingest(traces: Path, work: Path) -> None:
    files, _ = discover_trace_files(traces)
    with beam.Pipeline(options=PipelineOptions(list(DEFAULT_BEAM_ARGS))) as p:
        build_ingest(p, files, BUCKETS, DEFAULT_BLOCK_BYTES, work)


def _account(work: Path) -> None:
    store = work / "records"
    with beam.Pipeline(options=PipelineOptions(list(DEFAULT_BEAM_ARGS))) as p:
        build_account(p, store, stored_buckets(store), ("v1",), work)


def _crosscheck(work: Path) -> None:
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        table = con.sql(
            load_sql("crosscheck/job_day_chip_time.sql"), params={"records": str(work / "records")}
        ).to_arrow_table()
    pq.write_table(table, work / "crosscheck.parquet")


def _peak_kib() -> int:
    """This process's peak resident memory. Not getrusage's ru_maxrss: on Linux that survives
    exec, so a child would report its parent's peak; VmHWM belongs to this address space."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(stage: str, *paths: str) -> None:
    started = time.perf_counter()
    if stage == "ingest":
        _ingest(Path(paths[0]), Path(paths[1]))
    elif stage == "account":
        _account(Path(paths[0]))
    else:
        _crosscheck(Path(paths[0]))
    seconds = time.perf_counter() - started
    print(json.dumps({"stage": stage, "seconds": seconds, "peak_mib": _peak_kib() / 1024}))


if __name__ == "__main__":
    main(*sys.argv[1:])
