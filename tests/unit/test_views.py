"""Each view of sql/views/ against DuckDB on a small hand-made fixture: three jobs over two days,
rows written by hand into the published tables' DDL (from `mpg.schemas`), views created as
`mpg run` makes them (`new_database`), and every expected number worked out by hand below.

The fixture (v1; chip-seconds):

    day 1  train-a  1 chip    wanted  100 = scheduling 20 + ideal 30 + program_loss 30
                                            + runtime_idle 10 + compile 10            (PG 0.5)
           train-b  16 chips  wanted 1000 = productive_unprofiled 600 + lost_progress 300
                                            + checkpoint_save 100                      (no PG)
           serve-c  600 chips wanted 2000 = scheduling 500 + ideal 600 + program_loss 600
                                            + data_wait 200 + init 100                 (PG 0.5)
    day 2  train-a            wanted  200 = ideal 120 + program_loss 30 + checkpoint_restore 50
           train-b            wanted  500 = scheduling 100 + ideal 100 + program_loss 300

A v2 row for train-a on day 1 with other numbers is there too: the views show the current
version only.

Costs (cost_rates, priced by sql/publish/chip_time_cost.sql as a run prices them): tpu-v5p
$36 a chip-hour (0.01 a chip-second) and no known power; gpu-h100 no price and 720 W at PUE 1.25
(0.00025 kWh a chip-second). So train-b's chip-time is unpriced and the others' unpowered.
`RATES_BOTH_PRICED` prices gpu-h100 too, at $72 (0.02 a chip-second), for the views that weigh
chip-time by price. Two training jobs have checkpoint advice (`ADVICE`).

The views are read through a fresh read-only connection, as an analyst opens the file, so the
macros they call must be stored in it; and through the `duckdb` shell of the duckdb-cli dev
dependency, an older DuckDB that parses each view's SQL again.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from mpg.output.database import new_database
from mpg.output.views import VIEWS, bigquery_view_statements
from mpg.schemas import CHECKPOINT_ADVICE, COST_RATES, PUBLISHED
from mpg.sql.files import load_sql
from tests.support.given import sums

D1, D2 = date(2026, 1, 1), date(2026, 1, 2)
JOBS = {  # job: workload_class, framework, chip_generation, chips_requested
    "train-a": ("training", "jax", "tpu-v5p", 1),
    "train-b": ("training", "pytorch", "gpu-h100", 16),
    "serve-c": ("serving", "jax", "tpu-v5p", 600),
}
# job: owner, team, queue (serve-c's input named no owner and no team, train-b's no queue)
WHO = {
    "train-a": ("ana", "team-lm", "batch"),
    "train-b": ("bo", "team-lm", None),
    "serve-c": (None, None, "serving"),
}
# day, job, version: wanted, all_allocated, productive, ideal, sg, rg, pg, mpg
JOB_DAYS = {
    (D1, "train-a", "v1"): (100, 80, 60, 30, 0.8, 0.75, 0.5, 0.3),
    (D1, "train-b", "v1"): (1000, 1000, 600, None, 1.0, 0.6, None, None),
    (D1, "serve-c", "v1"): (2000, 1500, 1200, 600, 0.75, 0.8, 0.5, 0.3),
    (D2, "train-a", "v1"): (200, 200, 150, 120, 1.0, 0.75, 0.8, 0.6),
    (D2, "train-b", "v1"): (500, 400, 400, 100, 0.8, 1.0, 0.25, 0.2),
    (D1, "train-a", "v2"): (7777, 7777, 7777, 7777, 1.0, 1.0, 1.0, 1.0),
}
LEDGER = {
    (D1, "train-a", "v1"): {
        "scheduling": 20,
        "ideal": 30,
        "program_loss": 30,
        "runtime_idle": 10,
        "compile": 10,
    },
    (D1, "train-b", "v1"): {
        "productive_unprofiled": 600,
        "lost_progress": 300,
        "checkpoint_save": 100,
    },
    (D1, "serve-c", "v1"): {
        "scheduling": 500,
        "ideal": 600,
        "program_loss": 600,
        "data_wait": 200,
        "init": 100,
    },
    (D2, "train-a", "v1"): {"ideal": 120, "program_loss": 30, "checkpoint_restore": 50},
    (D2, "train-b", "v1"): {"scheduling": 100, "ideal": 100, "program_loss": 300},
    (D1, "train-a", "v2"): {"ideal": 7777},
}


def _rates(h100_price: float | None) -> list[dict]:
    source = {"price_source": "test", "power_source": "test", "pue": 1.25, "pue_source": "test"}
    return [
        {**source, "chip_generation": "tpu-v5p", "usd_per_chip_hour": 36.0,
         "watts_per_chip": None},
        {**source, "chip_generation": "gpu-h100", "usd_per_chip_hour": h100_price,
         "watts_per_chip": 720.0},
    ]  # fmt: skip


RATES = _rates(None)
RATES_BOTH_PRICED = _rates(72.0)


def _advice(job: str, slice_: tuple[str, str, str], **figures: float | None) -> dict:
    """A checkpoint_advice row: the sums the roll-up reads, everything else zero or NULL."""
    row = {name: None for name in CHECKPOINT_ADVICE.names}
    row.update(
        {name: 0 for name, t in zip(CHECKPOINT_ADVICE.names, CHECKPOINT_ADVICE.types, strict=True)
         if not CHECKPOINT_ADVICE.field(name).nullable and pa.types.is_integer(t)},
    )  # fmt: skip
    row.update(
        {name: 0.0 for name, t in zip(CHECKPOINT_ADVICE.names, CHECKPOINT_ADVICE.types, strict=True)
         if not CHECKPOINT_ADVICE.field(name).nullable and pa.types.is_floating(t)},
    )  # fmt: skip
    workload, framework, generation = slice_
    return {
        **row, "day": D2, "job_id": job, "workload_class": workload, "framework": framework,
        "chip_generation": generation, "chips_requested": 1, "first_day": D1, "last_day": D2,
        **figures,
    }  # fmt: skip


# train-a: 4 interruptions in 10 all-allocated hours, 10 saves of 10 s, 4 restarts of 100 s;
# train-b: no interruption, so no model and no advice.
ADVICE = [
    _advice("train-a", JOBS["train-a"][:3], all_allocated_s=36000.0, interruptions=4, saves=10,
            save_s=100.0, restarts=4, restart_s=400.0, intervals=10, interval_s=6000.0,
            all_allocated_chip_s=36000.0, productive_chip_s=30000.0,
            predicted_productive_chip_s=29000.0, advised_productive_chip_s=31000.0,
            advice="change", chip_hours_saved=2000 / 3600),
    _advice("train-b", JOBS["train-b"][:3], all_allocated_s=36000.0, interruptions=0, saves=5,
            save_s=50.0, restarts=0, restart_s=0.0, intervals=5, interval_s=3000.0,
            all_allocated_chip_s=72000.0, productive_chip_s=60000.0, advice="no_interruptions"),
]  # fmt: skip


def build(path: Path, current_version: str = "v1", rates: list[dict] = RATES) -> Path:
    """The fixture in a database made as `mpg run` makes it (`new_database`: tables, macros,
    `*_current` views, views), then filled: rows, slices, costs."""
    with new_database(str(path), current_version) as con:
        for (day, job, version), figures in JOB_DAYS.items():
            values = [day, job, version, *JOBS[job], *figures, *WHO[job]]
            columns = ", ".join(PUBLISHED["job_day_goodput"].names[: len(values)])
            con.execute(
                f"insert into job_day_goodput ({columns}) values ({', '.join('?' * len(values))})",
                values,
            )
        for (day, job, version), categories in LEDGER.items():
            for category, chip_s in categories.items():
                con.execute(
                    "insert into chip_time_ledger values (?, ?, ?, ?, ?)",
                    [day, job, version, category, chip_s],
                )
        con.from_arrow(pa.Table.from_pylist(rates, COST_RATES)).insert_into("cost_rates")
        con.from_arrow(pa.Table.from_pylist(ADVICE, CHECKPOINT_ADVICE)).insert_into(
            "checkpoint_advice"
        )
        con.sql(load_sql("publish/goodput_by_slice.sql")).insert_into("goodput_by_slice")
        con.sql(load_sql("publish/chip_time_cost.sql")).insert_into("chip_time_cost")
    return path


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("views") / "mpg.duckdb")


def rows(database: Path, query: str) -> list[dict]:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.sql(query).to_arrow_table().to_pylist()


def approx(expected: list[dict]) -> list[dict]:
    """Floats compared to 1e-12 relative: the sums run in DuckDB's order, the expectations in
    exact fractions."""
    return [
        {k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in row.items()}
        for row in expected
    ]


def ratios(
    wanted: float, all_allocated: float, productive: float, ideal: float, profiled: float
) -> dict:
    """The spec's slice ratios of hand-given sums (the expectation side)."""
    sg, rg = all_allocated / wanted, productive / all_allocated
    pg = ideal / profiled if profiled else None
    return {
        "pg_coverage": profiled / productive,
        "sg": sg,
        "rg": rg,
        "pg": pg,
        "mpg": None if pg is None else sg * rg * pg,
    }


def test_size_classes_cover_every_chip_count_once(database: Path) -> None:
    assert rows(database, "select * from job_size_classes") == [
        {"rank": 1, "size_class": "1", "min_chips": 1, "max_chips": 1},
        {"rank": 2, "size_class": "2-8", "min_chips": 2, "max_chips": 8},
        {"rank": 3, "size_class": "9-64", "min_chips": 9, "max_chips": 64},
        {"rank": 4, "size_class": "65-512", "min_chips": 65, "max_chips": 512},
        {"rank": 5, "size_class": "513+", "min_chips": 513, "max_chips": None},
    ]
    classes = rows(database, "select * from job_size_classes")
    for chips in range(1, 10_000):
        matching = [
            c["size_class"]
            for c in classes
            if c["min_chips"] <= chips and (c["max_chips"] is None or chips <= c["max_chips"])
        ]
        assert len(matching) == 1, chips


def test_job_days_sized(database: Path) -> None:
    got = rows(database, "select day, job_id, metric_version, size_class from job_days_sized")
    assert got == [
        {"day": D1, "job_id": "serve-c", "metric_version": "v1", "size_class": "513+"},
        {"day": D1, "job_id": "train-a", "metric_version": "v1", "size_class": "1"},
        {"day": D1, "job_id": "train-b", "metric_version": "v1", "size_class": "9-64"},
        {"day": D2, "job_id": "train-a", "metric_version": "v1", "size_class": "1"},
        {"day": D2, "job_id": "train-b", "metric_version": "v1", "size_class": "9-64"},
    ]


def test_fleet_mpg_by_day(database: Path) -> None:
    # day 1: ideal 30 + 600 (train-b has no PG); profiled: productive of A and C, 60 + 1200
    assert rows(database, "select * from fleet_mpg_by_day") == approx([
        {"day": D1, "metric_version": "v1", **sums(3100, 2580, 1860, 630),
         **ratios(3100, 2580, 1860, 630, 1260)},
        {"day": D2, "metric_version": "v1", **sums(700, 600, 550, 220),
         **ratios(700, 600, 550, 220, 550)},
    ])  # fmt: skip


def test_goodput_by_size_class(database: Path) -> None:
    got = rows(database, "select * from goodput_by_size_class")
    key = ("day", "size_class", "workload_class", "framework", "chip_generation")
    by_key = {tuple(r[k] for k in key): r for r in got}
    # every roll-up of the four slice columns, once: the distinct projections of the job-days
    cube = {
        (day, *(value if keep else None for value, keep in zip(slices, mask, strict=True)))
        for (day, job, version) in JOB_DAYS
        if version == "v1"
        for slices in [(size_of(job), *JOBS[job][:3])]
        for mask in itertools.product((True, False), repeat=4)
    }
    assert len(got) == len(by_key) == len(cube)
    assert set(by_key) == cube
    assert {r["metric_version"] for r in got} == {"v1"}
    strip = ("day", "metric_version", *key[1:])
    # train-b alone: day 1 has no PG (pg_coverage 0, PG and MPG NULL)
    assert {k: v for k, v in by_key[(D1, "9-64", None, None, None)].items() if k not in strip} == {
        **sums(1000, 1000, 600, None), "pg_coverage": 0.0, "sg": 1.0, "rg": 0.6, "pg": None,
        "mpg": None,
    }  # fmt: skip
    assert by_key[(D2, "9-64", "training", None, None)] == approx([
        {"day": D2, "metric_version": "v1", "size_class": "9-64", "workload_class": "training",
         "framework": None, "chip_generation": None, **sums(500, 400, 400, 100),
         **ratios(500, 400, 400, 100, 400)},
    ])[0]  # fmt: skip
    # tpu-v5p on day 1: train-a (size 1) and serve-c (513+) together
    assert by_key[(D1, None, None, None, "tpu-v5p")] == approx([
        {"day": D1, "metric_version": "v1", "size_class": None, "workload_class": None,
         "framework": None, "chip_generation": "tpu-v5p", **sums(2100, 1580, 1260, 630),
         **ratios(2100, 1580, 1260, 630, 1260)},
    ])[0]  # fmt: skip
    # the rows of every size are goodput_by_slice's
    slices = rows(database, "select * from goodput_by_slice_current")
    assert [r for r in got if r["size_class"] is None] == [
        {**row, "size_class": None} for row in approx(slices)
    ]


def size_of(job: str) -> str:
    return {"train-a": "1", "train-b": "9-64", "serve-c": "513+"}[job]


def test_ledger_by_slice(database: Path) -> None:
    fleet_day1 = rows(
        database,
        "select category, chip_s, share from ledger_by_slice where day = '2026-01-01' and "
        "size_class is null and workload_class is null and framework is null and "
        "chip_generation is null",
    )
    expected = {  # day 1's categories summed over the three jobs; wanted 3100
        "checkpoint_save": 100, "compile": 10, "data_wait": 200, "ideal": 630, "init": 100,
        "lost_progress": 300, "productive_unprofiled": 600, "program_loss": 630,
        "runtime_idle": 10, "scheduling": 520,
    }  # fmt: skip
    assert fleet_day1 == approx(
        [{"category": c, "chip_s": s, "share": s / 3100} for c, s in sorted(expected.items())]
    )
    size_day2 = rows(
        database,
        "select category, chip_s, share from ledger_by_slice where day = '2026-01-02' and "
        "size_class = '9-64' and workload_class = 'training' and framework = 'pytorch' and "
        "chip_generation = 'gpu-h100'",
    )
    assert size_day2 == [
        {"category": "ideal", "chip_s": 100.0, "share": 0.2},
        {"category": "program_loss", "chip_s": 300.0, "share": 0.6},
        {"category": "scheduling", "chip_s": 100.0, "share": 0.2},
    ]
    totals = rows(
        database,
        "select day, sum(chip_s) as chip_s, sum(share) as share, count(*) as n from "
        "ledger_by_slice group by day, size_class, workload_class, framework, chip_generation",
    )
    slices = rows(database, "select day, wanted_chip_s from goodput_by_size_class")
    assert len(totals) == len(slices)  # one slice-day each, the same roll-ups
    assert sorted((r["day"], r["chip_s"]) for r in totals) == sorted(
        (r["day"], r["wanted_chip_s"]) for r in slices
    )
    assert [r["share"] for r in totals] == [pytest.approx(1.0, rel=1e-12)] * len(totals)


def test_ledger_by_slice_in_dollars_and_kwh(database: Path) -> None:
    """Each category's dollars and kWh over the chip-time that has a price (a power); the rest
    counted apart. Day 1, all jobs: tpu-v5p (train-a, serve-c) priced at 0.01 a chip-second but
    unpowered, gpu-h100 (train-b) unpriced but 0.00025 kWh a chip-second."""
    fleet_day1 = rows(
        database,
        "select category, usd, unpriced_chip_s, kwh, unpowered_chip_s from ledger_by_slice "
        "where day = '2026-01-01' and size_class is null and workload_class is null and "
        "framework is null and chip_generation is null",
    )
    tpu = {  # train-a + serve-c on day 1
        "scheduling": 520, "ideal": 630, "program_loss": 630, "runtime_idle": 10,
        "compile": 10, "data_wait": 200, "init": 100,
    }  # fmt: skip
    gpu = {"productive_unprofiled": 600, "lost_progress": 300, "checkpoint_save": 100}
    expected = [
        {
            "category": c,
            "usd": 0.01 * tpu[c] if c in tpu else None,
            "unpriced_chip_s": float(gpu.get(c, 0)),
            "kwh": 0.00025 * gpu[c] if c in gpu else None,
            "unpowered_chip_s": float(tpu.get(c, 0)),
        }
        for c in sorted(tpu | gpu)
    ]
    assert fleet_day1 == approx(expected)


def test_cost_by_slice(database: Path, tmp_path: Path) -> None:
    """Fleet rows by hand. Day 1: train-a and serve-c priced (2100 chip-seconds, $21, ideal
    $6.30), so $14.70 lost = scheduling $5.20 (20 + 500 chip-s) + runtime $3.20 (runtime_idle 10,
    compile 10, data_wait 200, init 100) + program $6.30 (30 + 600) + unprofiled $0; train-b not
    priced (1000 chip-seconds, but 0.25 kWh). Day 2: train-a priced (200, $2, ideal $1.20: $0.80
    lost = runtime $0.50 + program $0.30), train-b not (500, 0.125 kWh)."""
    query = (
        "select * exclude (metric_version, size_class, workload_class, framework, "
        "chip_generation) from cost_by_slice where size_class is null and workload_class is null "
        "and framework is null and chip_generation is null"
    )
    assert rows(database, query) == approx([
        {"day": D1, "wanted_chip_s": 3100.0, "priced_chip_s": 2100.0, "unpriced_chip_s": 1000.0,
         "wanted_usd": 21.0, "usd_per_chip_hour": 36.0, "ideal_usd": 6.3, "lost_usd": 14.7,
         "lost_scheduling_usd": 5.2, "lost_runtime_usd": 3.2, "lost_program_usd": 6.3,
         "lost_unprofiled_usd": 0.0, "kwh": 0.25, "unpowered_chip_s": 2100.0},
        {"day": D2, "wanted_chip_s": 700.0, "priced_chip_s": 200.0, "unpriced_chip_s": 500.0,
         "wanted_usd": 2.0, "usd_per_chip_hour": 36.0, "ideal_usd": 1.2, "lost_usd": 0.8,
         "lost_scheduling_usd": 0.0, "lost_runtime_usd": 0.5, "lost_program_usd": 0.3,
         "lost_unprofiled_usd": 0.0, "kwh": 0.125, "unpowered_chip_s": 200.0},
    ])  # fmt: skip
    # nothing priced: no dollars, not zero dollars
    (gpu,) = rows(
        database,
        "select wanted_usd, lost_usd, lost_program_usd, unpriced_chip_s from cost_by_slice where "
        "day = '2026-01-02' and size_class is null and workload_class is null and framework is "
        "null and chip_generation = 'gpu-h100'",
    )
    assert gpu == {
        "wanted_usd": None, "lost_usd": None, "lost_program_usd": None, "unpriced_chip_s": 500.0
    }  # fmt: skip
    # Both priced (gpu-h100 at 0.02 a chip-second): day 2 wants $2 + $10 and loses train-a's
    # $0.80 and train-b's scheduling 100 and program loss 300 chip-seconds, $8: $8.80.
    both = build(tmp_path / "both.duckdb", rates=RATES_BOTH_PRICED)
    (day2,) = rows(both, query + " and day = '2026-01-02'")
    assert day2 == approx([
        {"day": D2, "wanted_chip_s": 700.0, "priced_chip_s": 700.0, "unpriced_chip_s": 0.0,
         "wanted_usd": 12.0, "usd_per_chip_hour": 12.0 / 700 * 3600, "ideal_usd": 3.2,
         "lost_usd": 8.8, "lost_scheduling_usd": 2.0, "lost_runtime_usd": 0.5,
         "lost_program_usd": 6.3, "lost_unprofiled_usd": 0.0, "kwh": 0.125,
         "unpowered_chip_s": 200.0},
    ])[0]  # fmt: skip
    # the roll-ups are cube cells: one row per slice-day of goodput_by_size_class
    keys = "day, size_class, workload_class, framework, chip_generation"
    assert rows(database, f"select {keys} from cost_by_slice") == rows(
        database, f"select {keys} from goodput_by_size_class"
    )
    # every row's dollars lost are its parts, and wanted less ideal
    for row in rows(both, "select * from cost_by_slice"):
        parts = sum(
            row[f"lost_{p}_usd"] for p in ("scheduling", "runtime", "program", "unprofiled")
        )
        assert row["lost_usd"] == pytest.approx(parts, rel=1e-12)
        assert row["lost_usd"] == pytest.approx(row["wanted_usd"] - row["ideal_usd"], rel=1e-12)


def test_rollup_by_day(database: Path) -> None:
    """The layer's roll-up per day. A job's rows by hand (train-a: day 1 loses 70 of its 100
    chip-seconds, $0.70 = scheduling 20 + runtime 10 + 10 + program 30 chip-s at $0.01; day 2
    loses 80, $0.80 = runtime 50 (its restore, the main loss) + program 30); train-b's unpriced
    days have chip-time lost and no dollars. Every other row is a cell of goodput_by_size_class
    and cost_by_slice (16 roll-ups of the four slice columns a day), with the same figures, or a
    team's, queue's or owner's (test_chargeback_by_month and test_slice_scorecard work them)."""
    query = (
        "select day, slice, days, wanted_chip_s, lost_chip_s, lost_usd, lost_scheduling_usd, "
        "lost_runtime_usd, lost_program_usd, lost_unprofiled_usd, unpriced_chip_s, main_loss "
        "from rollup_by_day where slice_kind = 'job' and job_id <> 'serve-c'"
    )
    parts = ("scheduling", "runtime", "program", "unprofiled")
    unpriced = dict.fromkeys(("lost_usd", *(f"lost_{p}_usd" for p in parts)))
    assert rows(database, query) == approx([
        {"day": D1, "slice": "train-a", "days": 1, "wanted_chip_s": 100.0, "lost_chip_s": 70.0,
         "lost_usd": 0.7, "lost_scheduling_usd": 0.2, "lost_runtime_usd": 0.2,
         "lost_program_usd": 0.3, "lost_unprofiled_usd": 0.0, "unpriced_chip_s": 0.0,
         "main_loss": "program_loss"},
        {"day": D1, "slice": "train-b", "days": 1, "wanted_chip_s": 1000.0, "lost_chip_s": 1000.0,
         **unpriced, "unpriced_chip_s": 1000.0, "main_loss": "productive_unprofiled"},
        {"day": D2, "slice": "train-a", "days": 1, "wanted_chip_s": 200.0, "lost_chip_s": 80.0,
         "lost_usd": 0.8, "lost_scheduling_usd": 0.0, "lost_runtime_usd": 0.5,
         "lost_program_usd": 0.3, "lost_unprofiled_usd": 0.0, "unpriced_chip_s": 0.0,
         "main_loss": "checkpoint_restore"},
        {"day": D2, "slice": "train-b", "days": 1, "wanted_chip_s": 500.0, "lost_chip_s": 400.0,
         **unpriced, "unpriced_chip_s": 500.0, "main_loss": "program_loss"},
    ])  # fmt: skip
    # every other row is a cell of the views over it, with their figures
    slices = "from rollup_by_day where slice_kind not in ('job', 'team', 'queue', 'owner')"
    assert len(rows(database, f"select distinct slice_kind {slices}")) == 16
    for view in ("goodput_by_size_class", "cost_by_slice"):
        cells = rows(database, f"from {view}")
        columns = ", ".join(cells[0])
        assert sorted(rows(database, f"select {columns} {slices}"), key=repr) == approx(
            sorted(cells, key=repr)
        ), view


def test_checkpoint_advice_by_slice(database: Path) -> None:
    """The fleet row by hand: 4 interruptions in 20 all-allocated hours (0.2 an hour, MTBI
    18,000 s); 15 saves of 150 s (10 s each), 4 restarts of 400 s, 15 intervals of 9,000 s (600 s
    each); Young/Daly sqrt(2 x 10 x 18,000) = 600 s. RGs over 108,000 chip-seconds, train-b (no
    advice) counted unchanged only where nothing is modelled: rg_predicted and rg_advised over
    train-a's 36,000 modelled chip-seconds. train-a, advised to change, saves 2,000 chip-s over
    the period the table covers, D1 to D2: 2,000 / 3,600 chip-hours, half that a day."""
    (fleet,) = rows(
        database,
        "select * from checkpoint_advice_by_slice where workload_class is null and framework "
        "is null and chip_generation is null",
    )
    assert fleet == approx([
        {"workload_class": None, "framework": None, "chip_generation": None, "jobs": 2,
         "all_allocated_s": 72000.0, "interruptions": 4, "interruptions_per_hour": 0.2,
         "mtbi_s": 18000.0, "mean_save_s": 10.0, "mean_restart_s": 100.0,
         "observed_interval_s": 600.0, "advised_interval_s": 600.0, "rg": 90000 / 108000,
         "rg_predicted": 29000 / 36000, "rg_advised": 31000 / 36000,
         "jobs_to_change": 1, "chip_hours_saved": 2000 / 3600, "days": 2,
         "chip_hours_saved_per_day": 1000 / 3600},
    ])[0]  # fmt: skip
    # the cube over the two jobs' (training, jax|pytorch, tpu-v5p|gpu-h100): the fleet, training,
    # and two values under each of the 6 groupings that name a framework or a generation
    assert len(rows(database, "select * from checkpoint_advice_by_slice")) == 1 + 1 + 6 * 2


def test_job_lifetime(database: Path) -> None:
    got = rows(database, "select * from job_lifetime")
    common = {"metric_version": "v1"}
    assert got == approx([
        {"job_id": "serve-c", **common, "workload_class": "serving", "framework": "jax",
         "chip_generation": "tpu-v5p", "chips_requested": 600, "size_class": "513+",
         "first_day": D1, "last_day": D1, "days": 1, **sums(2000, 1500, 1200, 600),
         **ratios(2000, 1500, 1200, 600, 1200), "lost_chip_s": 1400.0, "wanted_usd": 20.0,
         "lost_usd": 14.0},
        {"job_id": "train-a", **common, "workload_class": "training", "framework": "jax",
         "chip_generation": "tpu-v5p", "chips_requested": 1, "size_class": "1",
         "first_day": D1, "last_day": D2, "days": 2, **sums(300, 280, 210, 150),
         **ratios(300, 280, 210, 150, 210), "lost_chip_s": 150.0, "wanted_usd": 3.0,
         "lost_usd": 1.5},
        # day 1 has no PG: PG covers day 2's 400 of 1000 productive chip-seconds
        {"job_id": "train-b", **common, "workload_class": "training", "framework": "pytorch",
         "chip_generation": "gpu-h100", "chips_requested": 16, "size_class": "9-64",
         "first_day": D1, "last_day": D2, "days": 2, **sums(1500, 1400, 1000, 100),
         **ratios(1500, 1400, 1000, 100, 400), "lost_chip_s": 1400.0, "wanted_usd": None,
         "lost_usd": None},
    ])  # fmt: skip
    assert got[1]["mpg"] == pytest.approx(0.5, rel=1e-12)  # ideal / wanted = 150 / 300
    # not ideal / wanted (100 / 1500): PG covers 400 of train-b's 1000 productive chip-seconds,
    # so MPG = SG x RG x PG = 1400/1500 x 1000/1400 x 100/400
    assert got[2]["mpg"] == pytest.approx(1 / 6, rel=1e-12)


CATEGORIES = (
    "scheduling", "runtime_idle", "lost_progress", "checkpoint_save", "checkpoint_restore",
    "compile", "init", "data_wait", "program_loss", "productive_unprofiled",
)  # fmt: skip
RUNTIME = CATEGORIES[1:8]


def test_worst_jobs(database: Path) -> None:
    """Ranked by dollars lost, every category but ideal: serve-c $14 (1400 chip-seconds at
    0.01), train-a $1.50 (150); train-b's generation has no price, so it comes after every priced
    job though it lost 1400 chip-seconds (600 of them unprofiled, in its loss, not dropped).
    Each job is alone in its generation, framework and class: too few to say what PG is
    attainable."""
    got = rows(database, "select * from worst_jobs")

    def job(rank: int, job_id: str, main_loss: str, **lost: float) -> dict:
        price = 0.01 if JOBS[job_id][2] == "tpu-v5p" else None
        days = [f for (_, j, v), f in JOB_DAYS.items() if j == job_id and v == "v1"]
        wanted, allocated, productive = (sum(d[i] for d in days) for i in range(3))
        ideal = sum(d[3] or 0 for d in days)
        profiled = sum(d[2] for d in days if d[6] is not None)
        parts = {
            "scheduling": lost.get("scheduling", 0.0),
            "runtime": sum(lost.get(c, 0.0) for c in RUNTIME),
            "program": lost.get("program_loss", 0.0),
            "unprofiled": lost.get("productive_unprofiled", 0.0),
        }
        total = sum(parts.values())
        attrs = dict(zip(("workload_class", "framework", "chip_generation", "chips_requested"),
                         JOBS[job_id], strict=True))  # fmt: skip
        return {
            "rank": rank, "job_id": job_id, "metric_version": "v1", **attrs,
            "size_class": size_of(job_id), "wanted_chip_s": wanted, "productive_chip_s": productive,
            "lost_chip_s": total, "lost_share": total / wanted,
            **{f"lost_{p}_chip_s": v for p, v in parts.items()},
            **{f"{c}_chip_s": lost.get(c, 0.0) for c in CATEGORIES}, "main_loss": main_loss,
            **{k: v for k, v in ratios(wanted, allocated, productive, ideal, profiled).items()},
            "attainable_pg": None, "attainable_jobs": 1, "recoverable_chip_s": 0.0,
            "usd_per_chip_hour": price and price * 3600, "wanted_usd": price and wanted * price,
            "lost_usd": price and total * price,
            **{f"lost_{p}_usd": price and v * price for p, v in parts.items()},
            "recoverable_usd": price and 0.0,
        }  # fmt: skip

    expected = [
        job(1, "serve-c", "program_loss", scheduling=500, init=100, data_wait=200,
            program_loss=600),
        job(2, "train-a", "program_loss", scheduling=20, runtime_idle=10, compile=10,
            checkpoint_restore=50, program_loss=60),
        job(3, "train-b", "productive_unprofiled", scheduling=100, lost_progress=300,
            checkpoint_save=100, program_loss=300, productive_unprofiled=600),
    ]  # fmt: skip
    assert [{k: r[k] for k in expected[0]} for r in got] == approx(expected)
    for row in got:  # the categories add up to what was lost: wanted - ideal
        assert sum(row[f"{c}_chip_s"] for c in CATEGORIES) == row["lost_chip_s"]


def test_slice_scorecard(database: Path) -> None:
    """The last 7 days published (here both: D1..D2), worst first by dollars lost; the 2 days
    before have no data, so no change is shown. Fleet: 3 jobs, 3800 chip-seconds wanted, 2950
    lost (wanted 3800 - ideal 850); $15.50 lost of the priced (tpu-v5p) $23."""
    got = rows(database, "select * from slice_scorecard")
    keys = ("slice_kind", "slice", "rank", "jobs", "wanted_chip_s", "lost_chip_s", "lost_usd",
            "main_loss", "previous_complete", "mpg_change")  # fmt: skip
    assert [tuple(r[k] for k in keys) for r in got] == [
        ("fleet", "fleet", 1, 3, 3800.0, 2950.0, pytest.approx(15.5), "program_loss", False, None),
        ("chip_generation", "tpu-v5p", 1, 2, 2300.0, 1550.0, pytest.approx(15.5), "program_loss",
         False, None),
        ("chip_generation", "gpu-h100", 2, 1, 1500.0, 1400.0, None, "productive_unprofiled",
         False, None),
        ("workload_class", "serving", 1, 1, 2000.0, 1400.0, pytest.approx(14.0), "program_loss",
         False, None),
        ("workload_class", "training", 2, 2, 1800.0, 1550.0, pytest.approx(1.5),
         "productive_unprofiled", False, None),
        ("framework", "jax", 1, 2, 2300.0, 1550.0, pytest.approx(15.5), "program_loss", False,
         None),
        ("framework", "pytorch", 2, 1, 1500.0, 1400.0, None, "productive_unprofiled", False, None),
        ("size_class", "513+", 1, 1, 2000.0, 1400.0, pytest.approx(14.0), "program_loss", False,
         None),
        ("size_class", "1", 2, 1, 300.0, 150.0, pytest.approx(1.5), "program_loss", False, None),
        ("size_class", "9-64", 3, 1, 1500.0, 1400.0, None, "productive_unprofiled", False, None),
        # serve-c's input named no team (a slice of its own, NULL); team-lm is train-a and -b
        ("team", None, 1, 1, 2000.0, 1400.0, pytest.approx(14.0), "program_loss", False, None),
        ("team", "team-lm", 2, 2, 1800.0, 1550.0, pytest.approx(1.5), "productive_unprofiled",
         False, None),
        ("queue", "serving", 1, 1, 2000.0, 1400.0, pytest.approx(14.0), "program_loss", False,
         None),
        ("queue", "batch", 2, 1, 300.0, 150.0, pytest.approx(1.5), "program_loss", False, None),
        ("queue", None, 3, 1, 1500.0, 1400.0, None, "productive_unprofiled", False, None),
        ("owner", None, 1, 1, 2000.0, 1400.0, pytest.approx(14.0), "program_loss", False, None),
        ("owner", "ana", 2, 1, 300.0, 150.0, pytest.approx(1.5), "program_loss", False, None),
        ("owner", "bo", 3, 1, 1500.0, 1400.0, None, "productive_unprofiled", False, None),
    ]  # fmt: skip
    assert {(r["period_first"], r["period_last"], r["previous_first"], r["previous_last"])
            for r in got} == {(D1, D2, date(2025, 12, 30), date(2025, 12, 31))}  # fmt: skip


def test_chargeback_by_month(database: Path) -> None:
    """January 2026 (D1, D2), by hand. Used is the chip-time held (all-allocated); its dollars
    are wanted less scheduling. The fleet: 3800 wanted, 3180 used, $23 wanted (tpu-v5p's 2300
    chip-seconds at $0.01), $17.80 used (less 520 of scheduling), $15.50 lost = scheduling $5.20
    + runtime $3.70 (train-a's idle 10, compile 10, restore 50; serve-c's data wait 200, init
    100) + program $6.60 (60 + 600) + unprofiled $0 (train-b's 600 are unpriced); 1500
    unpriced. No team (serve-c) lost the most: $14; team-lm $1.50 (train-a; train-b unpriced)."""
    got = rows(database, "select * from chargeback_by_month")
    keys = ("level", "team", "queue", "owner", "rank", "jobs", "wanted_chip_s", "used_chip_s",
            "lost_chip_s", "unpriced_chip_s", "wanted_usd", "used_usd", "lost_usd",
            "lost_scheduling_usd", "lost_runtime_usd", "lost_program_usd", "lost_unprofiled_usd",
            "main_loss")  # fmt: skip
    serve_c = (1, 2000.0, 1500.0, 1400.0, 0.0, 20.0, 15.0, 14.0, 5.0, 3.0, 6.0, 0.0, "program_loss")
    train_a = (1, 300.0, 280.0, 150.0, 0.0, 3.0, 2.8, 1.5, 0.2, 0.7, 0.6, 0.0, "program_loss")
    train_b = (1, 1500.0, 1400.0, 1400.0, 1500.0, None, None, None, None, None, None, None,
               "productive_unprofiled")  # fmt: skip
    team_lm = (2, 1800.0, 1680.0, 1550.0, 1500.0, 3.0, 2.8, 1.5, 0.2, 0.7, 0.6, 0.0,
               "productive_unprofiled")  # fmt: skip
    expected = [
        ("fleet", None, None, None, 1, 3, 3800.0, 3180.0, 2950.0, 1500.0, 23.0, 17.8, 15.5, 5.2,
         3.7, 6.6, 0.0, "program_loss"),
        ("team", None, None, None, 1, *serve_c),
        ("team", "team-lm", None, None, 2, *team_lm),
        ("team+owner", None, None, None, 1, *serve_c),
        ("team+owner", "team-lm", None, "ana", 2, *train_a),
        ("team+owner", "team-lm", None, "bo", 3, *train_b),
        ("team+queue", None, "serving", None, 1, *serve_c),
        ("team+queue", "team-lm", "batch", None, 2, *train_a),
        ("team+queue", "team-lm", None, None, 3, *train_b),
    ]  # fmt: skip
    assert [tuple(r[k] for k in keys) for r in got] == [
        tuple(pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for v in row)
        for row in expected
    ]
    assert {r["month"] for r in got} == {date(2026, 1, 1)}
    assert (got[0]["first_day"], got[0]["last_day"], got[0]["days"]) == (D1, D2, 2)
    assert [r["days"] for r in got if r["level"] == "team"] == [1, 2]  # serve-c ran on D1 only
    # each level is the fleet, partitioned
    for level in ("team", "team+queue", "team+owner"):
        level_rows = [r for r in got if r["level"] == level]
        for column in ("wanted_chip_s", "used_chip_s", "lost_chip_s", "unpriced_chip_s"):
            assert sum(r[column] for r in level_rows) == got[0][column]
        for column in ("wanted_usd", "used_usd", "lost_usd"):
            assert sum(r[column] or 0 for r in level_rows) == pytest.approx(got[0][column])


def test_queue_waiting(database: Path) -> None:
    """Waiting is the scheduling chip-time; a job's waiting time that over its chips. train-a
    (batch, 1 chip) waited 20 chip-seconds: 20 s; train-b (no queue named, 16 chips) 100: 6.25 s;
    serve-c (serving, 600 chips) 500: 0.8333 s. Interruptions cost train-a its 50 of restore,
    train-b its 300 of lost progress."""
    got = rows(database, "select * from queue_waiting")
    keys = ("queue", "size_class", "jobs", "jobs_waiting", "wanted_chip_s", "waiting_chip_s",
            "waiting_share", "waiting_usd", "interrupted_chip_s", "wait_median_s", "wait_p90_s",
            "wait_max_s", "sg")  # fmt: skip
    train_b = (1, 1, 1500.0, 100.0, 100 / 1500, None, 300.0, 6.25, 6.25, 6.25, 1400 / 1500)
    train_a = (1, 1, 300.0, 20.0, 20 / 300, 0.2, 50.0, 20.0, 20.0, 20.0, 280 / 300)
    serve_c = (1, 1, 2000.0, 500.0, 0.25, 5.0, 0.0, 500 / 600, 500 / 600, 500 / 600, 0.75)
    expected = [
        (None, None, *train_b), (None, "9-64", *train_b),
        ("batch", None, *train_a), ("batch", "1", *train_a),
        ("serving", None, *serve_c), ("serving", "513+", *serve_c),
    ]  # fmt: skip
    assert [tuple(r[k] for k in keys) for r in got] == [
        tuple(pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for v in row)
        for row in expected
    ]


def test_the_views_show_the_current_version(tmp_path: Path) -> None:
    database = build(tmp_path / "mpg.duckdb", current_version="v2")
    assert rows(database, "select day, metric_version, wanted_chip_s from fleet_mpg_by_day") == [
        {"day": D1, "metric_version": "v2", "wanted_chip_s": 7777.0}
    ]
    assert rows(database, "select job_id, lost_chip_s from worst_jobs") == [
        {"job_id": "train-a", "lost_chip_s": 0.0}
    ]


DUCKDB_CLI = Path(sys.executable).with_name("duckdb")  # from the duckdb-cli dev dependency


@pytest.mark.parametrize("view", VIEWS)
def test_the_duckdb_shell_reads_every_view(database: Path, view: str) -> None:
    """The shell analysts have (duckdb-cli, an older DuckDB) binds each view again from its SQL,
    with the stored macros, and gets the rows this DuckDB gets."""
    args = [str(DUCKDB_CLI), "-readonly", "-json", str(database), "-c", f"from {view}"]
    shell = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    here = [{k: str(v) if isinstance(v, date) else v for k, v in r.items()} for r in
            rows(database, f"from {view}")]  # fmt: skip
    assert shell == approx(here)


def test_the_bigquery_views_give_the_same_rows(database: Path, tmp_path: Path) -> None:
    """The views as BigQuery gets them (macros inlined, struct unnests as columns, mixed cubes
    as grouping sets: mpg.sql.bigquery_dialect), read back into DuckDB's dialect by sqlglot and
    created over a copy of the fixture in place of the originals, its macros dropped: every view
    gives the rows it gave. (tests/e2e/test_bigquery.py runs them on the BigQuery emulator.)"""
    copy = tmp_path / "rewritten.duckdb"
    copy.write_bytes(database.read_bytes())
    statements = bigquery_view_statements(lambda name: exp.table_(name, quoted=True), PUBLISHED)
    with duckdb.connect(str(copy)) as con:
        for statement in statements:
            (duckdb_sql,) = sqlglot.transpile(statement, read="bigquery", write="duckdb")
            con.execute(duckdb_sql)
        for macro in ("mpg_ratio", "mpg_goodput_ratios", "mpg_profiled_sum"):
            con.execute(f"drop macro {macro}")  # a fixed name: nothing may call it now
    for view in VIEWS:
        assert rows(copy, f"from {view}") == approx(rows(database, f"from {view}")), view


def test_the_bigquery_views_read_the_facts_once() -> None:
    """In BigQuery only `job_day_facts` holds the layer's facts (the job-days joined to their
    costs): every view over the current version's facts reads that view, and the per-day
    roll-ups read `rollup_by_day`, rather than carrying the layer's SQL again (docs/bigquery.md).
    Their rows are the same (the test above, and tests/e2e/test_bigquery.py on the emulator)."""
    statements = bigquery_view_statements(lambda name: exp.table_(name, quoted=True), PUBLISHED)
    reads = {}
    for name, sql in zip(VIEWS, statements, strict=True):
        view = sqlglot.parse_one(sql, read="bigquery")
        ctes = {cte.alias for cte in view.find_all(exp.CTE)}
        reads[name] = {t.name for t in view.find_all(exp.Table)} - ctes - {name}
    assert [name for name, tables in reads.items() if "chip_time_cost" in tables] == [
        "job_day_facts"
    ]
    assert [name for name, tables in reads.items() if "job_day_facts" in tables] == [
        "job_days_sized", "rollup_by_day", "ledger_by_slice", "worst_jobs", "slice_scorecard",
        "chargeback_by_month", "queue_waiting",
    ]  # fmt: skip
    for name in ("goodput_by_size_class", "cost_by_slice"):
        assert reads[name] == {"rollup_by_day", "job_size_classes"}, name
    assert reads["job_lifetime"] == {"worst_jobs"}
