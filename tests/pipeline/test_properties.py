"""Properties over simulated fleets (hypothesis): the ledger adds up, ratios are bounded, slices
are ratios of sums, and nothing depends on how records are split into files, ordered or repeated.
"""

from __future__ import annotations

import gzip
import itertools
import random
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpg.simulate import simulate
from tests.support.fleet import account_fleet, manifest, slices

REL = 1e-9
FLEETS = st.tuples(st.integers(0, 10_000), st.integers(2, 12), st.integers(1, 3))
SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _simulated(seed: int, jobs: int, days: int, where: Path) -> Path:
    root = where / "traces"
    simulate(seed=seed, jobs=jobs, days=days, out=root)
    return root


@SETTINGS
@given(FLEETS)
def test_ledger_adds_up_and_ratios_are_bounded(fleet: tuple[int, int, int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = account_fleet(_simulated(*fleet, Path(tmp)))
    per_job_day = result.ledger.group_by("day", "job_id").agg(pl.col("chip_s").sum())
    joined = result.job_days.join(per_job_day, on=["day", "job_id"], how="left")
    assert joined.height == result.job_days.height > 0
    for row in joined.iter_rows(named=True):
        assert row["chip_s"] == pytest.approx(row["wanted_chip_s"], rel=REL)
        assert 0 <= row["sg"] <= 1
        # RG is undefined (NULL) exactly where the job-day has no all-allocated time.
        assert (row["rg"] is None) == (row["all_allocated_chip_s"] == 0)
        assert row["rg"] is None or 0 <= row["rg"] <= 1
        assert row["productive_chip_s"] <= row["all_allocated_chip_s"] <= row["wanted_chip_s"]
        if row["pg"] is not None:
            assert row["ideal_chip_s"] == pytest.approx(
                row["productive_chip_s"] * row["pg"], rel=REL
            )
            assert row["mpg"] == pytest.approx(row["ideal_chip_s"] / row["wanted_chip_s"], rel=REL)
        if row["productive_chip_s"] == 0:
            assert row["mpg"] == 0.0  # spec, Accounting 5, profiled or not
        elif row["pg"] is None:
            assert row["mpg"] is None


@SETTINGS
@given(FLEETS)
def test_every_slice_is_its_ratio_of_sums(fleet: tuple[int, int, int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        job_days = account_fleet(_simulated(*fleet, Path(tmp))).job_days
    cube = slices(job_days)
    dims = ("workload_class", "framework", "chip_generation")
    expected_rows = sum(
        job_days.select("day", *combo).unique().height
        for n in range(4)
        for combo in itertools.combinations(dims, n)
    )
    assert cube.height == expected_rows
    for s in cube.iter_rows(named=True):
        members = job_days.filter(pl.col("day") == s["day"])
        for d in dims:
            if s[d] is not None:
                members = members.filter(pl.col(d) == s[d])
        wanted, allocated, productive = (
            members[c].sum() for c in ("wanted_chip_s", "all_allocated_chip_s", "productive_chip_s")
        )
        profiled = members.filter(pl.col("pg").is_not_null())
        assert s["wanted_chip_s"] == pytest.approx(wanted, rel=REL)
        assert s["sg"] == pytest.approx(allocated / wanted, rel=REL)
        assert s["rg"] == (pytest.approx(productive / allocated, rel=REL) if allocated else None)
        if profiled["productive_chip_s"].sum() > 0:
            pg = profiled["ideal_chip_s"].sum() / profiled["productive_chip_s"].sum()
            assert s["pg"] == pytest.approx(pg, rel=REL)
            assert s["mpg"] == pytest.approx(s["sg"] * s["rg"] * pg, rel=REL)
            assert s["pg_coverage"] == pytest.approx(
                profiled["productive_chip_s"].sum() / productive, rel=REL
            )
        else:
            # spec, Accounting 5: MPG is 0 where nothing of the wanted time was productive
            assert s["pg"] is None and s["mpg"] == (0.0 if productive == 0 else None)


def _redeliver(root: Path, target: Path, rnd: random.Random, files: int, repeats: float) -> None:
    """Every line of `root` again, shuffled over `files` files per source, some gzipped, with
    extra copies of a share of the lines."""
    for source_dir in (root / s for s in ("scheduler", "runtime", "profiles")):
        lines: list[bytes] = []
        for path in sorted(source_dir.rglob("*.jsonl*")):
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            lines += data.split(b"\n")[: -1 if data.endswith(b"\n") else None]
        lines += rnd.sample(lines, int(len(lines) * repeats))
        rnd.shuffle(lines)
        out = target / source_dir.name
        out.mkdir(parents=True)
        for i in range(files):
            part = b"".join(line + b"\n" for line in lines[i::files])
            if rnd.random() < 0.5:
                (out / f"part-{i}.jsonl.gz").write_bytes(gzip.compress(part))
            else:
                (out / f"part-{i}.jsonl").write_bytes(part)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FLEETS, st.integers(0, 2**32), st.integers(1, 5), st.sampled_from([0.0, 0.1, 0.5]))
def test_output_does_not_depend_on_split_order_or_repeats(
    fleet: tuple[int, int, int], shuffle: int, files: int, repeats: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = _simulated(*fleet, Path(tmp))
        again = Path(tmp) / "again"
        _redeliver(root, again, random.Random(shuffle), files, repeats)
        first, second = account_fleet(root), account_fleet(again)
    keys = ["day", "job_id", "metric_version"]
    assert first.job_days.sort(keys).equals(second.job_days.sort(keys))
    ledger_keys = [*keys, "category"]
    assert first.ledger.sort(ledger_keys).equals(second.ledger.sort(ledger_keys))
    # A repeated malformed line is another malformed record (its own file and line), so compare
    # what was rejected and why, not how often.
    reasons = ["source", "reason", "raw"]
    assert (
        first.quarantine.select(reasons)
        .unique()
        .sort(reasons)
        .equals(second.quarantine.select(reasons).unique().sort(reasons))
    )


@SETTINGS
@given(FLEETS)
def test_counts_match_what_the_simulator_wrote(fleet: tuple[int, int, int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = _simulated(*fleet, Path(tmp))
        result = account_fleet(root)
        written = manifest(root)
    for source, (read, accepted, duplicates, quarantined) in result.counts.items():
        assert read == accepted + duplicates + quarantined
        assert read == written[source]["lines_written"]
        assert duplicates == written[source]["duplicates"]
        assert quarantined == written[source]["malformed"]
