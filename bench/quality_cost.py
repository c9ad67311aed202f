"""What the expectation suites cost on each engine, on the output folder of an `mpg run`, and
whether the two engines agree there.

    mpg simulate --seed 3 --jobs 2000 --days 7 --out /tmp/fleet
    mpg run --traces /tmp/fleet --out /tmp/run
    python bench/quality_cost.py /tmp/run

For `mpg` (the run's engine, `mpg.quality.arrow_checks`) and `great-expectations` (GX itself, the
reference), prints in seconds: starting the engine for the source suites (for GX its import,
paid once per worker; then again, imported already), the per-bucket validation over every job
bucket of the record store (median, 90th percentile, max, and the median CPU time, which a busy
machine inflates less; reading the bucket is not counted), combining the parts, and
`validate_outputs` on the published database. Then whether the engines' results are equal, row
for row (they must be: tests/e2e/test_quality.py holds mpg's engine to GX's findings).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from mpg.output.lookup import segment_records
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.quality import BucketValidator, combine_results, validate_outputs
from mpg.quality.engine import ENGINES
from mpg.transforms.reconcile import JobRecords


def _failed(results: pa.Table) -> int:
    return results.num_rows - pc.sum(results.column("success")).as_py()


def _engine(engine: str, buckets: list[JobRecords], database: Path) -> tuple[dict, pa.Table]:
    started = time.perf_counter()
    BucketValidator(engine=engine)
    setup_s = time.perf_counter() - started
    started = time.perf_counter()
    validator = BucketValidator(engine=engine)  # imported already: the engine's own set-up
    setup_warm_s = time.perf_counter() - started

    parts, seconds, cpu_seconds = [], [], []
    for records in buckets:
        started, cpu_started = time.perf_counter(), time.process_time()
        parts.append(validator(records))
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
    started = time.perf_counter()
    combined = combine_results(parts)
    combine_s = time.perf_counter() - started

    with duckdb.connect(str(database), read_only=True) as con:
        started = time.perf_counter()
        outputs = validate_outputs(con, con.table("record_counts").to_arrow_table(), engine)
        outputs_s = time.perf_counter() - started
    p90 = statistics.quantiles(seconds, n=10, method="inclusive")[-1] if len(seconds) > 1 else 0
    figures = {
        "engine": engine,
        "buckets": len(seconds),
        "setup_s": round(setup_s, 3),
        "setup_warm_s": round(setup_warm_s, 3),
        "bucket_median_s": round(statistics.median(seconds), 3),
        "bucket_p90_s": round(p90, 3),
        "bucket_max_s": round(max(seconds), 3),
        "bucket_median_cpu_s": round(statistics.median(cpu_seconds), 3),
        "buckets_total_s": round(sum(seconds), 2),
        "combine_s": round(combine_s, 3),
        "validate_outputs_s": round(outputs_s, 3),
        "source_failures": _failed(combined),
        "output_failures": _failed(outputs),
    }
    return figures, pa.concat_tables([combined, outputs])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the --out folder of an `mpg run`")
    out = parser.parse_args(argv).out
    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    assert snapshot is not None, f"{out} has no published run"
    buckets = list(segment_records(store, snapshot))
    results = {}
    for engine in ENGINES:
        figures, results[engine] = _engine(engine, buckets, out / "mpg.duckdb")
        print(json.dumps(figures), flush=True)
    same = results[ENGINES[0]].equals(results[ENGINES[1]])
    print(json.dumps({"engines_agree": same}))


if __name__ == "__main__":
    main(sys.argv[1:])
