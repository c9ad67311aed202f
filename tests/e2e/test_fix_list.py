"""The fix list, the attainable PG and the scorecard by hand: rows written into the published
tables (tests/support/handmade.py) and read through `mpg report`'s own code (read_report_data,
fixes, report_json), each expected figure worked out below.

One day (2026-01-01), every job training / jax / tpu-v4 at $3.60 a chip-hour ($0.001 a
chip-second), 1 chip each; lost = every ledger category but ideal. Chip-seconds:

    job       wanted  ledger                                       main loss        $ lost
    ckpt-a    1000    lost_progress 600, productive_unprofiled 400 lost_progress    1.00
    ckpt-b     900    checkpoint_save 500, unprofiled 400          checkpoint_save  0.90
    data-c     800    data_wait 500, unprofiled 300                data_wait        0.80
    comp-d     700    compile 400, unprofiled 300                  compile          0.70
    sched-e    600    scheduling 400, unprofiled 200               scheduling       0.60
    unprof-f   550    unprofiled 550                               unprofiled       0.55
    p1..p5     100 each (p5: 10), all productive and profiled at PG 0.2, 0.3, 0.4, 0.5, 0.6:
              ideal 20, 30, 40, 50 and 6; program loss 80, 70, 60, 50 and 4 ($0.08 .. $0.004)

The attainable PG of tpu-v4 / jax / training: its 5 profiled jobs (the others have no PG) by PG,
weighted by profiled chip-time 100, 100, 100, 100, 10 (410 in all): the jobs up to PG 0.4 hold
300 (73%), up to 0.5 hold 400 (98% >= 90%): 0.5. p1 would not lose 100 x (0.5 - 0.2) = 30
chip-seconds there ($0.03), p2 20, p3 10; p4 is at it, p5 above it.

ckpt-a is advised to change (every 50 steps, now 200), ckpt-b to keep its interval.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from mpg.definitions.costs import chip_time_cost
from mpg.report.blocks import Table
from mpg.report.data import read_report_data
from mpg.report.export import report_json
from mpg.report.facts import coverage_blocks
from mpg.report.fixes import fixes
from mpg.schemas import CHECKPOINT_ADVICE, CHIP_TIME_LEDGER, COST_RATES, JOB_DAY_GOODPUT
from tests.support.handmade import publish_rows

DAY = dt.date(2026, 1, 1)
SLICE = ("training", "jax", "tpu-v4")
# job: wanted, its ledger (ideal included), its PG (None: no profile)
JOBS: dict[str, tuple[float, dict[str, float], float | None]] = {
    "ckpt-a": (1000, {"lost_progress": 600, "productive_unprofiled": 400}, None),
    "ckpt-b": (900, {"checkpoint_save": 500, "productive_unprofiled": 400}, None),
    "data-c": (800, {"data_wait": 500, "productive_unprofiled": 300}, None),
    "comp-d": (700, {"compile": 400, "productive_unprofiled": 300}, None),
    "sched-e": (600, {"scheduling": 400, "productive_unprofiled": 200}, None),
    "unprof-f": (550, {"productive_unprofiled": 550}, None),
    "p1": (100, {"ideal": 20, "program_loss": 80}, 0.2),
    "p2": (100, {"ideal": 30, "program_loss": 70}, 0.3),
    "p3": (100, {"ideal": 40, "program_loss": 60}, 0.4),
    "p4": (100, {"ideal": 50, "program_loss": 50}, 0.5),
    "p5": (10, {"ideal": 6, "program_loss": 4}, 0.6),
}
RATE = {"chip_generation": "tpu-v4", "usd_per_chip_hour": 3.6, "price_source": "test",
        "watts_per_chip": None, "power_source": None, "pue": 1.1, "pue_source": "test"}  # fmt: skip


def _job_day(job: str) -> dict:
    wanted, ledger, pg = JOBS[job]
    allocated = wanted - ledger.get("scheduling", 0)
    productive = sum(ledger.get(c, 0) for c in ("ideal", "program_loss", "productive_unprofiled"))
    ideal = None if pg is None else ledger["ideal"]
    return {
        "day": DAY, "job_id": job, "metric_version": "v1", "workload_class": SLICE[0],
        "framework": SLICE[1], "chip_generation": SLICE[2], "chips_requested": 1,
        "wanted_chip_s": float(wanted), "all_allocated_chip_s": float(allocated),
        "productive_chip_s": float(productive), "ideal_chip_s": ideal,
        "sg": allocated / wanted, "rg": productive / allocated if allocated else None, "pg": pg,
        "mpg": None if pg is None else ideal / wanted,
    }  # fmt: skip


def _advice(job: str, advice: str, **figures: float | int) -> dict:
    """A checkpoint_advice row: the figures the fix list reads, everything else 0 or NULL."""
    row: dict = {}
    for field in CHECKPOINT_ADVICE:
        if field.nullable:
            row[field.name] = None
        elif pa.types.is_integer(field.type):
            row[field.name] = 0
        elif pa.types.is_floating(field.type):
            row[field.name] = 0.0
    return {
        **row, "day": DAY, "job_id": job, "workload_class": SLICE[0], "framework": SLICE[1],
        "chip_generation": SLICE[2], "chips_requested": 1, "first_day": DAY, "last_day": DAY,
        "advice": advice, "confidence": 0.9, **figures,
    }  # fmt: skip


ADVICE = [
    _advice("ckpt-a", "change", interruptions=12, observed_interval_steps=200.0,
            observed_interval_s=3600.0, advised_interval_steps=50, advised_interval_s=900.0,
            advised_interval_low_s=600.0, advised_interval_high_s=1500.0,
            chip_hours_saved=0.1),
    _advice("ckpt-b", "keep", interruptions=4, observed_interval_steps=100.0,
            observed_interval_s=1800.0, advised_interval_steps=90, advised_interval_s=1700.0),
]  # fmt: skip


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    job_days = pa.Table.from_pylist([_job_day(j) for j in JOBS], JOB_DAY_GOODPUT)
    ledger = pa.Table.from_pylist(
        [
            {"day": DAY, "job_id": j, "metric_version": "v1", "category": c, "chip_s": float(s)}
            for j, (_, categories, _) in JOBS.items()
            for c, s in categories.items()
        ],
        CHIP_TIME_LEDGER,
    )
    rates = pa.Table.from_pylist([RATE], COST_RATES)
    return publish_rows(
        tmp_path_factory.mktemp("fixes") / "out",
        {
            "job_day_goodput": job_days,
            "chip_time_ledger": ledger,
            "cost_rates": rates,
            "chip_time_cost": chip_time_cost(ledger, job_days, rates),
            "checkpoint_advice": ADVICE,
        },
    )


def test_the_fix_list_names_each_main_loss_and_its_action(out: Path) -> None:
    data = read_report_data(out, "v1", None, None)
    found = [(f.rank, f.job_id, f.main_loss, f.action, f.lost_usd) for f in fixes(data)]
    assert found == [
        (1, "ckpt-a", "lost_progress", "checkpoint_interval", pytest.approx(1.0)),
        (2, "ckpt-b", "checkpoint_save", "checkpoint_interval", pytest.approx(0.9)),
        (3, "data-c", "data_wait", "input_pipeline", pytest.approx(0.8)),
        (4, "comp-d", "compile", "compile_cache", pytest.approx(0.7)),
        (5, "sched-e", "scheduling", "scheduling", pytest.approx(0.6)),
        (6, "unprof-f", "productive_unprofiled", "profile", pytest.approx(0.55)),
        (7, "p1", "program_loss", "attainable_pg", pytest.approx(0.08)),
        (8, "p2", "program_loss", "attainable_pg", pytest.approx(0.07)),
        (9, "p3", "program_loss", "attainable_pg", pytest.approx(0.06)),
        (10, "p4", "program_loss", "attainable_pg", pytest.approx(0.05)),
    ]
    advice = {f.job_id: f.advice for f in fixes(data)}
    assert advice["ckpt-a"] == (
        "checkpoint interval: 0.2 chip-hours of lost progress; save every 50 steps (now every "
        "200 steps, 60 min): about 15 min between saves, 90% sure it lies within 10 min to 25 "
        "min (from 12 interruptions); saves 0.1 chip-hours, $0.36 over its life"
    )
    assert advice["ckpt-b"] == (
        "checkpoint interval: 0.1 chip-hours of checkpoint save; keep your interval (now every "
        "100 steps, 30 min): the advised one does not beat it by more than the uncertainty of 4 "
        "interruptions"
    )
    assert advice["unprof-f"].startswith("profile this job: 0.2 chip-hours of its kept work")
    assert advice["p1"] == (
        "program efficiency: PG 20.0% against an attainable 50.0% (the chip-time-weighted 90th "
        "percentile of 5 jobs of tpu-v4 / jax / training); reaching it would save 0.0 "
        "chip-hours ($0.03)"
    )
    assert advice["p4"].startswith("program efficiency: PG 50.0%, already at or above what")


def test_attainable_pg_by_hand(out: Path) -> None:
    data = read_report_data(out, "v1", None, None)
    jobs = {r["job_id"]: r for r in data.fix_list.iter_rows(named=True)}
    for job, recoverable in (("p1", 30.0), ("p2", 20.0), ("p3", 10.0), ("p4", 0.0)):
        assert jobs[job]["attainable_pg"] == 0.5
        assert jobs[job]["attainable_jobs"] == 5
        assert jobs[job]["recoverable_chip_s"] == pytest.approx(recoverable, abs=1e-9), job
        assert jobs[job]["recoverable_usd"] == pytest.approx(recoverable / 1000, abs=1e-12)
    assert jobs["ckpt-a"]["attainable_jobs"] == 5  # its group's, though it has no PG itself
    assert jobs["ckpt-a"]["recoverable_chip_s"] == 0


def test_the_scorecard_and_the_json_by_hand(out: Path) -> None:
    """The fleet: 4960 chip-seconds wanted, 146 ideal, so 4814 lost, $4.814 = scheduling 0.4 +
    runtime 2.0 (600 + 500 + 500 + 400) + program 0.264 + unprofiled 2.15; one day, no earlier
    one: no change."""
    data = read_report_data(out, "v1", None, None)
    payload = report_json(data)
    fleet = payload["headline"]
    assert (fleet["wanted_chip_s"], fleet["lost_chip_s"]) == (4960.0, 4814.0)
    assert fleet["lost_usd"] == pytest.approx(4.814)
    assert [fleet[f"lost_{p}_usd"] for p in ("scheduling", "runtime", "program", "unprofiled")] == (
        pytest.approx([0.4, 2.0, 0.264, 2.15])
    )
    assert fleet["reconciliation"] == (
        "$4.81 lost = scheduling $0.40 + runtime $2.00 + program $0.26 + unprofiled $2.15"
    )
    (card,) = [r for r in payload["scorecard"] if r["slice_kind"] == "chip_generation"]
    assert (card["slice"], card["rank"], card["main_loss"]) == (
        "tpu-v4",
        1,
        "productive_unprofiled",
    )
    assert card["mpg_change"] is None and card["previous_complete"] is False
    assert [f["job_id"] for f in payload["fix_list"]][:2] == ["ckpt-a", "ckpt-b"]
    assert payload["fix_list"][0]["advised_interval_steps"] == 50


def test_a_drop_in_pg_coverage_is_flagged(tmp_path: Path) -> None:
    """Two days of one job: all of day 1's productive time profiled, half of day 2's (one of two
    job-days unprofiled). The report over day 2 flags the fall against the day before both ways:
    against the previous period (day 1) and day to day."""
    day2 = DAY + dt.timedelta(days=1)
    rows = []
    for day, job, pg in ((DAY, "a", 0.5), (day2, "a", 0.5), (day2, "b", None)):
        row = {**_job_day("p1"), "day": day, "job_id": job, "pg": pg}
        row["ideal_chip_s"] = None if pg is None else 50.0
        rows.append(row)
    out = publish_rows(tmp_path / "out", {"job_day_goodput": rows})
    # day to day, over both days: day 2's coverage is 50 points below day 1's
    whole = read_report_data(out, "v1", None, None)
    (drop,) = report_json(whole)["data_quality"]["coverage_drops"]
    assert (drop["day"], drop["pg_coverage"], drop["previous_pg_coverage"]) == (day2, 0.5, 1.0)
    (table,) = [b for b in coverage_blocks(whole) if isinstance(b, Table)]
    assert table.rows == ((str(day2), "50.0%", f"100.0% ({DAY})", "-50.0 pt"),)
    # against the previous period: a report of day 2 alone, day 1 before it
    alone = read_report_data(out, "v1", day2, day2)
    assert report_json(alone)["data_quality"]["coverage_drops"] == []
    notes = [b.text for b in coverage_blocks(alone) if getattr(b, "kind", "") == "flag"]
    assert notes[0].startswith(f"PG coverage fell from 100.0% ({DAY} to {DAY}) to 50.0%: ")
