"""`make bench`: throughput and peak memory of daily operation and of fleets of growing size.

    python bench/run_bench.py [--jobs 2000] [--days 7] [--seed 1] [--scale 1,4,16]

Daily operation: a simulated fleet of about two million runtime spans (cached under
bench/.work/), re-delivered as one file per source and day, as a fleet's exporters would. Then,
each a process tree of its own whose peak memory is sampled from outside (bench/stage.py):
- first run: `mpg run` over every day but the last, into an empty folder;
- daily run: the last day's files arrive, `mpg run` again (incremental);
- again: `mpg run` with nothing new;
- full: `mpg run --full` over all days into another folder (what the daily run avoids);
- backfill: `mpg backfill --metric-version v2` over every day, from the record store;
- duckdb query: the hand-written query sql/crosscheck/job_day_chip_time.sql over the same raw
  trace files, the independent route to the job-day chip-time and the speed to compare with;
- import: `mpg import ml-goodput` of a generated log of about a million recorder records;
- pairs: `--pairs` more of the full run and the query, alternating (the machine's own pace moves
  either side by about 10% from one minute to the next, so one pair says little about a ratio
  near its target): the ratio printed is the median over every pair, each pair's beside it.
Day 61 (bench/day_after.py): the 61st day of a 60-day fleet beside a full run over the 61 days,
on a local folder and on fake-gcs-server (`--day-after JOBS`).
Scale: fleets of about 1, 4 and 16 million spans (`--scale`, in millions), each run from raw
JSONL into an empty folder beside the DuckDB query over the same files, one after the other.
Prints seconds, spans per second and peak memory per stage; whether the daily run's tables equal
the full run's; how far the pipeline's chip-time is from the query's; per size, the run's time
over the query's; and how long a fleet-day of 1e8 spans would take at the largest size's rate
(the work is per job bucket, so time grows with the spans at that rate, in the same memory).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
from pathlib import Path

import duckdb
import polars as pl

from mpg.simulate import simulate
from mpg.sql.files import load_sql

WORK = Path(__file__).parent / ".work"
_DAY = r'"(?:ts|start)"\s*:\s*"(\d{4}-\d{2}-\d{2})'
# The generated ml-goodput log: recorder records from 2026-11-02T06:00:00Z, a step every 2.5 s.
START = 1_793_599_200.0
STEP_S = 2.5
# The spans of a large fleet's day, extrapolated to from the scale stage's largest fleet.
FLEET_DAY = 1e8


def write_goodput_log(path: Path, jobs: int, steps: int) -> int:
    """A large ml-goodput-measurement log for the import stage: `jobs` jobs of `steps` steps,
    a job start and end, and an Orbax save every 100 steps, one JSON payload per line, as the
    recorder and Orbax log them. Returns its number of records."""
    grid = pl.DataFrame({"job": pl.arange(0, jobs, eager=True)}).join(
        pl.DataFrame({"step": pl.arange(0, steps, eager=True)}), how="cross"
    )
    name = pl.lit('{"job_name": "bench-') + pl.col("job").cast(pl.String) + pl.lit('"')
    t = START + 10 + pl.col("step") * STEP_S
    step_lines = grid.select(
        name + pl.lit(', "step_count": ') + pl.col("step").cast(pl.String)
        + pl.lit(', "step_start_time": ') + t.cast(pl.String) + pl.lit("}")
    )  # fmt: skip
    saves = grid.filter(pl.col("step") % 100 == 99).select(
        name + pl.lit(', "event_type": "save", "step": ') + pl.col("step").cast(pl.String)
        + pl.lit(', "checkpoint_manager_blocking_start_time": ') + (t + 2.0).cast(pl.String)
        + pl.lit(', "checkpoint_manager_blocking_duration_secs": 0.3}')
    )  # fmt: skip
    ids = pl.DataFrame({"job": pl.arange(0, jobs, eager=True)})
    ends = ids.select(
        name + pl.lit(', "job_end_time": ') + pl.lit(START + 10 + steps * STEP_S).cast(pl.String)
        + pl.lit("}")
    )  # fmt: skip
    starts = ids.select(name + pl.lit(f', "job_start_time": {START}}}'))
    lines = pl.concat([s.to_series() for s in (starts, step_lines, saves, ends)])
    path.write_text(lines.str.join("\n").item() + "\n", encoding="utf-8")
    return lines.len()


def _stage(*args: str) -> dict:
    from stage import measure

    return measure(list(args))


def _by_day(traces: Path, dest: Path) -> list[str]:
    """Every line of `traces` again, one file per source and UTC day (lines without a readable
    day go with the first); returns the days, in order."""
    days: set[str] = set()
    for source in ("scheduler", "runtime", "profiles"):
        chunks = []
        for path in sorted((traces / source).glob("*.jsonl*")):
            data = path.read_bytes()
            text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode()
            chunks.append(pl.Series("line", text.splitlines()))
        day = pl.col("line").str.extract(_DAY).str.to_date(strict=False)  # malformed: null
        lines = pl.DataFrame(pl.concat(chunks)).with_columns(day.cast(pl.String).alias("day"))
        first = lines.get_column("day").drop_nulls().min()
        lines = lines.with_columns(pl.col("day").fill_null(first))
        (dest / source).mkdir(parents=True, exist_ok=True)
        for (day,), group in lines.group_by("day"):
            text = "\n".join(group.get_column("line").to_list()) + "\n"
            (dest / source / f"{source}-{day}.jsonl").write_text(text)
            days.add(str(day))
    return sorted(days)


def _job_day_files(out: Path) -> list[str]:
    from mpg.output.database import table_files
    from mpg.output.snapshot import read_current
    from mpg.output.store import OutputStore
    from mpg.schemas import DATA_FILES

    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    assert snapshot is not None
    files = store.read_parquet(snapshot.state["files"], DATA_FILES)
    return [store.storage.full(p) for p in table_files(files, "job_day_goodput")]


def _compare(out: Path, other: Path, crosscheck: Path) -> tuple[dict, int]:
    """The pipeline vs the crosscheck query, and the rows where two runs' job days differ."""
    with duckdb.connect() as con:
        params = {"pipeline": _job_day_files(out), "crosscheck": str(crosscheck)}
        checked = con.sql(load_sql("crosscheck/compare_job_days.sql"), params=params)
        checked = checked.to_arrow_table().to_pylist()[0]
        params = {"left": _job_day_files(out), "right": _job_day_files(other), "version": "v1"}
        differing = con.sql(load_sql("crosscheck/differing_job_days.sql"), params=params)
        return checked, differing.fetchall()[0][0]


def _fleet(seed: int, jobs: int, days: int) -> tuple[Path, int]:
    """A simulated fleet (cached) and its runtime spans."""
    traces = WORK / f"traces-s{seed}-j{jobs}-d{days}"
    if not (traces / "manifest.json").exists():
        shutil.rmtree(traces, ignore_errors=True)
        simulate(seed=seed, jobs=jobs, days=days, out=traces)
    return traces, json.loads((traces / "manifest.json").read_text())["runtime"]["lines_written"]


def _scale(millions: list[int], seed: int, days: int) -> list[tuple[int, dict, dict]]:
    """Per size: a fleet of about that many million spans (1,000 jobs per million over `days`
    days), `mpg run` from raw JSONL into an empty folder, and the DuckDB query on it."""
    results = []
    for size in millions:
        traces, spans = _fleet(seed, 1000 * size * 7 // days, days)
        out = WORK / f"scale-{size}"
        shutil.rmtree(out, ignore_errors=True)
        run = _stage("run", str(traces), str(out))
        query = _stage("crosscheck", str(traces), str(WORK / f"scale-{size}.parquet"))
        shutil.rmtree(out, ignore_errors=True)
        results.append((spans, run, query))
    return results


def _pairs(root: Path, count: int) -> list[tuple[float, float]]:
    """`count` more (full run, query) pairs over `root`, in seconds, one after the other."""
    pairs = []
    for _ in range(count):
        shutil.rmtree(WORK / "pair", ignore_errors=True)
        run = _stage("run", str(root), str(WORK / "pair" / "out"), "--full")
        query = _stage("crosscheck", str(root), str(WORK / "pair" / "crosscheck.parquet"))
        pairs.append((run["seconds"], query["seconds"]))
    shutil.rmtree(WORK / "pair", ignore_errors=True)
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", default="1,4,16", help="fleet sizes in millions of spans")
    parser.add_argument(
        "--day-after", type=int, default=50, help="jobs of the day-61 stage (0: skip it)"
    )
    parser.add_argument(
        "--pairs", type=int, default=3, help="more alternating pairs of the full run and the query"
    )
    args = parser.parse_args()

    traces, spans = _fleet(args.seed, args.jobs, args.days)
    daily = WORK / f"daily-{traces.name.removeprefix('traces-')}"
    if not daily.exists():
        _by_day(traces, daily.with_suffix(".tmp"))
        daily.with_suffix(".tmp").rename(daily)
    days = sorted({p.name.split("-", 1)[1][:10] for p in daily.glob("*/*.jsonl")})
    root, out, full = WORK / "root", WORK / "run" / "out", WORK / "full" / "out"
    for path in (root, out.parent, full.parent):
        shutil.rmtree(path, ignore_errors=True)
    for path in daily.glob("*/*.jsonl"):  # every day but the last
        if days[-1] not in path.name:
            (root / path.parent.name).mkdir(parents=True, exist_ok=True)
            (root / path.parent.name / path.name).symlink_to(path)

    results = {"first run": _stage("run", str(root), str(out))}
    for path in daily.glob(f"*/*-{days[-1]}.jsonl"):
        (root / path.parent.name / path.name).symlink_to(path)
    results["daily run"] = _stage("run", str(root), str(out))
    results["again"] = _stage("run", str(root), str(out))
    results["full"] = _stage("run", str(root), str(full), "--full")
    results["duckdb query"] = _stage("crosscheck", str(root), str(WORK / "crosscheck.parquet"))
    pairs = [(results["full"]["seconds"], results["duckdb query"]["seconds"])]
    pairs += _pairs(root, args.pairs)
    results["backfill v2"] = _stage("backfill", str(out), "v2", days[0], days[-1])
    log = WORK / "goodput-log" / "recorder.jsonl"
    log.parent.mkdir(exist_ok=True)
    records = write_goodput_log(log, jobs=10, steps=100_000)
    results["import"] = _stage(
        "import", "ml-goodput", str(log), str(WORK / "goodput-root"),
        "--chips", "256", "--chip-generation", "tpu-v5p",
    )  # fmt: skip

    print(f"fleet: {args.jobs} jobs over {args.days} days, {spans:,} runtime spans ({daily})")
    print(f"{'stage':<13} {'seconds':>8} {'per s':>10} {'peak MiB':>9}  what it did")
    rates = {"full": spans, "duckdb query": spans, "import": records}  # spans, or records read
    for stage, r in results.items():
        rate = f"{rates[stage] / r['seconds']:>10,.0f}" if stage in rates else " " * 10
        did = r.get("did", "")
        print(f"{stage:<13} {r['seconds']:>8.2f} {rate} {r['peak_mib']:>9.0f}  {did}")
    ratio = statistics.median(run / query for run, query in pairs)
    each = ", ".join(f"{run / query:.2f}x ({run:.2f} s / {query:.2f} s)" for run, query in pairs)
    print(
        f"mpg run --full / one DuckDB query over the same raw files: {ratio:.2f}x"
        f" (the median of {len(pairs)} alternating pairs: {each})"
    )
    checked, differing = _compare(out, full, WORK / "crosscheck.parquet")
    print(f"import: {records:,} ml-goodput records (per s: records read)")
    print(f"daily run vs full recompute: {differing} v1 job-day rows differ")
    print(
        f"pipeline vs duckdb query: {checked['job_days']:,} job-days,"
        f" {checked['unmatched_job_days']} unmatched,"
        f" largest relative difference {checked['largest_relative_difference']:.2e}"
    )
    if args.day_after:
        from day_after import report as day_after  # its own stage: bench/day_after.py

        print()
        day_after(args.seed, args.day_after, days=60)
    sizes = [int(x) for x in args.scale.split(",") if x]
    if not sizes:
        return
    print()
    print(f"{'spans':>12} {'mpg run s':>10} {'spans/s':>9} {'peak MiB':>9} "
          f"{'query s':>8} {'query MiB':>9} {'ratio':>6}")  # fmt: skip
    scaled = _scale(sizes, args.seed, args.days)
    for spans, run, query in scaled:
        print(
            f"{spans:>12,} {run['seconds']:>10.1f} {spans / run['seconds']:>9,.0f} "
            f"{run['peak_mib']:>9.0f} {query['seconds']:>8.1f} {query['peak_mib']:>9.0f} "
            f"{run['seconds'] / query['seconds']:>6.2f}"
        )
    spans, run, _ = scaled[-1]
    rate = spans / run["seconds"]
    print(
        f"a fleet-day of {FLEET_DAY:.0e} spans at {rate:,.0f} spans/s (the {spans:,}-span rate): "
        f"{FLEET_DAY / rate / 60:.1f} minutes"
    )


if __name__ == "__main__":
    main()
