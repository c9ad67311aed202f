"""`make bench`: throughput and peak memory of daily operation on a simulated fleet.

    python bench/run_bench.py [--jobs 2000] [--days 7] [--seed 1]

Simulates about two million runtime spans (cached under bench/.work/) and re-delivers them as one
file per source and day, as a fleet's exporters would. Then, each in its own process:
- first run: `mpg run` over every day but the last, into an empty folder;
- daily run: the last day's files arrive, `mpg run` again (incremental);
- again: `mpg run` with nothing new;
- full: `mpg run --full` over all days into another folder (what the daily run avoids);
- backfill: `mpg backfill --metric-version v2` over every day, from the stored records;
- crosscheck: the hand-written DuckDB query `sql/crosscheck/job_day_chip_time.sql` over the
  record store, an independent route to the job-day chip-time;
- import: `mpg import ml-goodput` of a generated log of about a million recorder records.
Prints seconds, runtime spans per second and peak memory per stage; whether the daily run's tables
equal the full run's; and how far the pipeline's chip-time is from the query's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl

from mpg.simulate import simulate
from mpg.sqlfiles import load_sql

WORK = Path(__file__).parent / ".work"
_DAY = r'"(?:ts|start)"\s*:\s*"(\d{4}-\d{2}-\d{2})'
# The generated ml-goodput log: recorder records from 2026-11-02T06:00:00Z, a step every 2.5 s.
START = 1_793_599_200.0
STEP_S = 2.5


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
    out = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "stage.py"), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


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


def _compare(out: Path, other: Path) -> tuple[dict, int]:
    """The pipeline vs the crosscheck query, and the rows where two runs' job days differ."""
    current = out / ".mpg" / "current" / "tables" / "job_day_goodput" / "*" / "*.parquet"
    with duckdb.connect() as con:
        checked = (
            con.sql(
                load_sql("crosscheck/compare_job_days.sql"),
                params={
                    "pipeline": str(current),
                    "crosscheck": str(out.parent / "crosscheck.parquet"),
                },
            )
            .to_arrow_table()
            .to_pylist()[0]
        )
        theirs = str(current).replace(str(out), str(other))
        differing = con.sql(
            load_sql("crosscheck/differing_job_days.sql"),
            params={"left": str(current), "right": theirs, "version": "v1"},
        ).fetchall()[0][0]
    return checked, differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    name = f"s{args.seed}-j{args.jobs}-d{args.days}"
    traces, daily = WORK / f"traces-{name}", WORK / f"daily-{name}"
    if not (traces / "manifest.json").exists():
        shutil.rmtree(traces, ignore_errors=True)
        simulate(seed=args.seed, jobs=args.jobs, days=args.days, out=traces)
    if not daily.exists():
        _by_day(traces, daily.with_suffix(".tmp"))
        daily.with_suffix(".tmp").rename(daily)
    spans = json.loads((traces / "manifest.json").read_text())["runtime"]["lines_written"]
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
    results["backfill v2"] = _stage("backfill", str(out), "v2", days[0], days[-1])
    results["crosscheck"] = _stage("crosscheck", str(out))
    log = WORK / "goodput-log" / "recorder.jsonl"
    log.parent.mkdir(exist_ok=True)
    records = write_goodput_log(log, jobs=10, steps=100_000)
    results["import"] = _stage(
        "import", "ml-goodput", str(log), str(WORK / "goodput-root"),
        "--chips", "256", "--chip-generation", "tpu-v5p",
    )  # fmt: skip

    print(f"fleet: {args.jobs} jobs over {args.days} days, {spans:,} runtime spans ({daily})")
    print(f"{'stage':<12} {'seconds':>8} {'per s':>10} {'peak MiB':>9}  what it did")
    rates = {"full": spans, "crosscheck": spans, "import": records}  # spans, or records read
    for stage, r in results.items():
        rate = f"{rates[stage] / r['seconds']:>10,.0f}" if stage in rates else " " * 10
        did = f"{r['plan']}; parsed {r['parsed']}, {r['changed_days']} days" if "plan" in r else ""
        print(f"{stage:<12} {r['seconds']:>8.2f} {rate} {r['peak_mib']:>9.0f}  {did}")
    checked, differing = _compare(out, full)
    print(f"import: {records:,} ml-goodput records (per s: records read)")
    print(f"daily run vs full recompute: {differing} v1 job-day rows differ")
    print(
        f"pipeline vs crosscheck SQL: {checked['job_days']:,} job-days,"
        f" {checked['unmatched_job_days']} unmatched,"
        f" largest relative difference {checked['largest_relative_difference']:.2e}"
    )


if __name__ == "__main__":
    main()
