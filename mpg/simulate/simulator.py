"""Simulate a fleet and write its trace root: the one entry point, `simulate`.

    mpg simulate --seed 7 --jobs 60 --days 3 --out data/sample_traces

Each stage draws from its own generator, spawned from `seed` (numpy SeedSequence, PCG64), so the
stages stay independent: the same arguments always give the same bytes.
"""

from __future__ import annotations

import datetime
import fnmatch
from pathlib import Path

import numpy as np

from mpg.core.errors import UserError
from mpg.schemas import SOURCES
from mpg.simulate.deliver import deliver
from mpg.simulate.encode import profile_lines, runtime_lines, scheduler_lines
from mpg.simulate.fleet import DAY_S, draw_fleet
from mpg.simulate.malformed import profile_malformed, runtime_malformed, scheduler_malformed
from mpg.simulate.manifest import SimulationManifest
from mpg.simulate.records import gather_records
from mpg.simulate.timeline import simulate_job
from mpg.storage import Storage

DEFAULT_START = datetime.date(2026, 11, 20)
MANIFEST_FILE = "manifest.json"


class SimulationError(UserError, ValueError):
    """Arguments the simulator cannot use (a user error: the CLI reports it in one line)."""


def _generator(seed: np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _refuse_old_traces(out: Storage) -> None:
    """A root that already holds trace files would mix two fleets: refuse rather than delete."""
    for source in SOURCES:
        names = [e.path.removeprefix(f"{source}/") for e in out.list(source)]
        if any("/" not in n and fnmatch.fnmatch(n, "*.jsonl*") for n in names):
            raise SimulationError(
                f"{out.uri_of(source)} already holds trace files; remove them first"
            )


def simulate(
    seed: int, jobs: int, days: int, out: str | Path, start: datetime.date = DEFAULT_START
) -> SimulationManifest:
    """Simulate `jobs` jobs over `days` UTC days from `start`; write the trace root `out` (a
    folder, `gs://` or `s3://`, through `mpg.storage`).

    Writes `out/{scheduler,runtime,profiles}/*.jsonl[.gz]` in the layout of spec fleet-traces.md
    and `out/manifest.json` (the returned manifest), and returns the manifest. The runtime holds
    about 145 spans per job-day (jobs x days): `simulate(seed, jobs=2000, days=7)` writes about
    2 million, in seconds. Raises SimulationError for a negative seed, fewer than one job or day,
    or an `out` that already holds trace files.
    """
    if seed < 0:
        raise SimulationError(f"--seed must be >= 0, not {seed}")
    if jobs < 1 or days < 1:
        raise SimulationError("--jobs and --days must be at least 1")
    root = Storage(out)
    _refuse_old_traces(root)
    fleet_seed, jobs_seed, profile_seed, encode_seed, bad_seed, deliver_seed = (
        np.random.SeedSequence(seed).spawn(6)
    )
    plans = draw_fleet(_generator(fleet_seed), jobs, days)
    traces = [
        simulate_job(plan, _generator(job_seed), days * DAY_S)
        for plan, job_seed in zip(plans, jobs_seed.spawn(jobs), strict=True)
    ]
    at = datetime.datetime.combine(start, datetime.time(), tzinfo=datetime.UTC)
    records = gather_records(plans, traces, int(at.timestamp()) * 1000, _generator(profile_seed))
    rng = _generator(encode_seed)
    lines = {
        "scheduler": scheduler_lines(records.scheduler, records.jobs, rng),
        "runtime": runtime_lines(records.runtime, rng),
        "profiles": profile_lines(records.profiles, rng),
    }
    rng = _generator(bad_seed)
    malformed = {
        "scheduler": scheduler_malformed(lines["scheduler"], rng, at),
        "runtime": runtime_malformed(lines["runtime"], rng, at),
        "profiles": profile_malformed(lines["profiles"], rng, at),
    }
    rng = _generator(deliver_seed)
    written = {s: deliver(s, lines[s], malformed[s], rng, root) for s in SOURCES}
    manifest = SimulationManifest(
        seed=seed,
        jobs=jobs,
        days=days,
        start=start,
        scheduler=written["scheduler"],
        runtime=written["runtime"],
        profiles=written["profiles"],
    )
    root.write_text(MANIFEST_FILE, manifest.to_json())
    return manifest
