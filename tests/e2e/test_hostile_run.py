"""A whole hostile trace root through the real `mpg run` (hypothesis): a simulated fleet with
hostile lines added to every source (tests/support/hostile.py), a gzip cut in half and a line
over the length limit. No crash; records read = accepted + duplicates + quarantined, each
quarantined with a reason; counts, quarantine and job-days the same as the independent
reference's (tests/support/reference). The parsers alone, on many more inputs:
tests/unit/test_fuzz.py."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpg.pipelines.io import MAX_LINE_BYTES
from mpg.schemas import SOURCES
from mpg.simulate import simulate
from tests.support.cli import run_mpg
from tests.support.hostile import hostile_lines, times_on
from tests.support.reference import reason_class, reference
from tests.support.reference.compare import JOB_DAY_NUMBERS, differences, numbers, read_tables

DAY = "2026-11-20"  # the simulated fleet's day
# Hostile jobs: their valid records are accepted and accounted, like any job's.
HOSTILE_JOBS = [
    {
        "type": "JOB_SUBMIT",
        "ts": f"{DAY}T00:00:00Z",
        "job_id": job,
        "chips_requested": 8,
        "chip_generation": "tpu-v5p",
        "workload_class": "training",
        "framework": "jax",
    }
    for job in ("j", "train-1")
]


@st.composite
def hostile_roots(draw: st.DrawFn) -> dict[str, list[bytes]]:
    """Per source, hostile lines to add to a simulated fleet."""
    return {
        s: draw(st.lists(hostile_lines(s, times_on(DAY)), min_size=5, max_size=40)) for s in SOURCES
    }


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=2)
@given(hostile_roots())
def test_mpg_run_on_a_hostile_trace_root_accounts_for_every_record(
    hostile: dict[str, list[bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, out = Path(tmp) / "traces", Path(tmp) / "out"
        simulate(seed=11, jobs=6, days=1, out=root)
        jobs = "".join(json.dumps(submit) + "\n" for submit in HOSTILE_JOBS)
        (root / "scheduler" / "hostile-jobs.jsonl").write_text(jobs)
        for source, lines in hostile.items():
            text = b"\n".join(lines) + b"\n"
            (root / source / "hostile.jsonl").write_bytes(text)
            packed = gzip.compress(text)
            (root / source / "hostile-cut.jsonl.gz").write_bytes(packed[: len(packed) // 2])
        (root / "profiles" / "long.jsonl").write_bytes(b"{}\n" + b" " * (MAX_LINE_BYTES + 1))
        result = run_mpg("run", "--traces", root, "--out", out)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        tables = read_tables(out / "mpg.duckdb")
        ref = reference(root)
    counts = {r["source"]: r for r in tables["record_counts"]}
    for source, c in counts.items():
        assert c["records_read"] == c["accepted"] + c["duplicates"] + c["quarantined"]
        quarantined = [q for q in tables["quarantine"] if q["source"] == source]
        assert len(quarantined) == c["quarantined"]
        assert all(q["reason"] for q in quarantined)
        r = ref.counts[source]
        assert (c["records_read"], c["accepted"], c["duplicates"], c["quarantined"]) == (
            r.read,
            r.accepted,
            r.duplicates,
            r.quarantined,
        )
    got = {
        (q["source"], q["file"], q["line"]): (reason_class(q["reason"]), q["raw"])
        for q in tables["quarantine"]
    }
    expected = {(q.source, q.file, q.line): (reason_class(q.reason), q.raw) for q in ref.quarantine}
    assert got == expected
    job_days = {(r["day"], r["job_id"]): r for r in tables["job_day_goodput"]}
    assert not differences(ref.job_days, job_days, numbers(JOB_DAY_NUMBERS))
