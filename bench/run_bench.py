"""`make bench`: throughput and peak memory of each stage on a simulated fleet.

    python bench/run_bench.py [--jobs 2000] [--days 7] [--seed 1]

Simulates about two million runtime spans (cached under bench/.work/), then runs, each in its own
process: the ingest pipeline (files -> record store), the account pipeline (record store ->
job-day tables), and the hand-written DuckDB query `sql/crosscheck/job_day_chip_time.sql` over the
same Parquet. Prints spans per second and peak memory per stage, and how far the pipeline's
job-day chip-time is from the query's (an independent route to the same numbers).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from mpg.simulate import simulate
from mpg.sqlfiles import load_sql

WORK = Path(__file__).parent / ".work"


def _stage(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "stage.py"), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _compare(work: Path) -> dict:
    with duckdb.connect() as con:
        rel = con.sql(
            load_sql("crosscheck/compare_job_days.sql"),
            params={
                "pipeline": str(work / "tables/job_day_goodput/*/*.parquet"),
                "crosscheck": str(work / "crosscheck.parquet"),
            },
        )
        return rel.to_arrow_table().to_pylist()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    traces = WORK / f"traces-s{args.seed}-j{args.jobs}-d{args.days}"
    if not (traces / "manifest.json").exists():
        shutil.rmtree(traces, ignore_errors=True)
        simulate(seed=args.seed, jobs=args.jobs, days=args.days, out=traces)
    manifest = json.loads((traces / "manifest.json").read_text())
    spans = manifest["runtime"]["lines_written"]
    work = WORK / "run"
    shutil.rmtree(work, ignore_errors=True)

    results = [
        _stage("ingest", str(traces), str(work)),
        _stage("account", str(work)),
        _stage("crosscheck", str(work)),
    ]
    print(f"fleet: {args.jobs} jobs over {args.days} days, {spans:,} runtime spans ({traces})")
    print(f"{'stage':<12} {'seconds':>8} {'spans/s':>12} {'peak MiB':>9}")
    for r in results:
        rate = spans / r["seconds"]
        print(f"{r['stage']:<12} {r['seconds']:>8.2f} {rate:>12,.0f} {r['peak_mib']:>9.0f}")
    c = _compare(work)
    print(
        f"pipeline vs crosscheck SQL: {c['job_days']:,} job-days,"
        f" {c['unmatched_job_days']} unmatched,"
        f" largest relative difference {c['largest_relative_difference']:.2e}"
    )


if __name__ == "__main__":
    main()
