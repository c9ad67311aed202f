"""`make bench` stage: the 61st day of a 60-day fleet, beside a full run over the 61 days.

    python bench/day_after.py [--jobs 50] [--days 60] [--seed 1]

A daily run's cost should follow the new day's data, not the history behind it. A simulated
fleet of `--days` days plus one is cut into one file per source and day (as exporters deliver
it); the history goes in first (`mpg run` into an empty folder), then the last day's files
arrive and `mpg run` runs again; beside it, `mpg run` over all the days into an empty folder.
Each on a local folder and on an object store (fake-gcs-server, started here on 127.0.0.1, the
trace root and the output folder both in its bucket), each run a process tree of its own
(bench/stage.py). Prints seconds and peak memory per run and the daily run's share of the full
one; the new day's share of the fleet's spans is what a daily run's cost should approach, above
a run's fixed costs (imports, the pipeline's start, publishing).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests.support.emulators, for the object store

from run_bench import WORK, _by_day, _stage

from mpg.simulate import simulate


def _history(seed: int, jobs: int, days: int) -> tuple[Path, list[str], int, int]:
    """The fleet by day (cached), the history's days, the fleet's runtime spans and the new
    day's. The new day is the simulation's last full day, with the few records it ran past it;
    the history is every day before (`days` of them, and the first, partial one)."""
    name = f"day-after-s{seed}-j{jobs}-d{days}"
    daily = WORK / name
    if not daily.exists():
        traces = WORK / f"{name}-traces"
        shutil.rmtree(traces, ignore_errors=True)
        simulate(seed=seed, jobs=jobs, days=days + 2, out=traces)
        _by_day(traces, daily.with_suffix(".tmp"))
        daily.with_suffix(".tmp").rename(daily)
        shutil.rmtree(traces)
    spans = {_day(p): _lines([p]) for p in daily.glob("runtime/*.jsonl")}
    found = sorted({_day(p) for p in daily.glob("*/*.jsonl")})
    typical = sorted(spans.values())[len(spans) // 2]
    last = max(d for d in found if spans.get(d, 0) >= typical // 10)
    history = [d for d in found if d < last]
    new_spans = sum(n for d, n in spans.items() if d >= last)
    return daily, history, sum(spans.values()), new_spans


def _day(path: Path) -> str:
    return path.name.split("-", 1)[1][:10]


def _lines(paths) -> int:
    return sum(path.read_bytes().count(b"\n") for path in paths)


def _deliver(daily: Path, root, history: list[str], new: bool) -> None:
    """The history's files (or the new day's) into the trace root `root` (a Storage)."""
    for path in sorted(daily.glob("*/*.jsonl")):
        if (_day(path) in history) != new:
            root.write_bytes(path.relative_to(daily).as_posix(), path.read_bytes())


def _runs(daily: Path, history: list[str], root, out: str, full: str) -> dict[str, dict]:
    _deliver(daily, root, history, new=False)
    results = {"first": _stage("run", root.uri, out)}
    _deliver(daily, root, history, new=True)
    results["daily"] = _stage("run", root.uri, out)
    results["full"] = _stage("run", root.uri, full)
    return results


def day_after(seed: int, jobs: int, days: int) -> dict[str, dict[str, dict]]:
    """The three runs on a local folder and on fake-gcs-server."""
    from mpg.storage import Storage
    from tests.support.emulators import fake_gcs_server

    daily, history, _, _ = _history(seed, jobs, days)
    base = WORK / "day-after"
    shutil.rmtree(base, ignore_errors=True)
    results = {
        "local folder": _runs(
            daily, history, Storage(base / "traces"), str(base / "out"), str(base / "full")
        )
    }
    with fake_gcs_server(base) as store, store.activated():
        root = store.root("day-after")
        results["fake-gcs-server"] = _runs(
            daily, history, Storage(f"{root}/traces"), f"{root}/out", f"{root}/full"
        )
    shutil.rmtree(base, ignore_errors=True)
    return results


def report(seed: int, jobs: int, days: int) -> None:
    _, _, spans, new_spans = _history(seed, jobs, days)
    results = day_after(seed, jobs, days)
    _, history, _, _ = _history(seed, jobs, days)
    print(
        f"the day after {len(history)} days of history: {jobs} jobs, {spans:,} runtime spans, "
        f"{new_spans:,} of them the new day's ({new_spans / spans:.1%})"
    )
    print(
        f"{'where':<16} {'first run s':>11} {'daily run s':>11} {'full run s':>10} "
        f"{'daily/full':>10} {'daily MiB':>9} {'full MiB':>8}"
    )
    for where, r in results.items():
        first, day, full = r["first"], r["daily"], r["full"]
        print(
            f"{where:<16} {first['seconds']:>11.1f} {day['seconds']:>11.1f} "
            f"{full['seconds']:>10.1f} {day['seconds'] / full['seconds']:>10.2f} "
            f"{day['peak_mib']:>9.0f} {full['peak_mib']:>8.0f}"
        )
        assert day["changed_days"] >= 1, json.dumps(day)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    report(args.seed, args.jobs, args.days)


if __name__ == "__main__":
    main()
