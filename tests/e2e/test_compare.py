"""`mpg compare`: the decomposition of a change in fleet MPG, checked three ways.

- by hand: two small two-period databases built from the schemas' DDL, whose every part is
  worked out in docs/compare.md ("Worked example") or in the comments here;
- adding up: on a simulated fleet run through `mpg run`, the parts sum to the change in the
  published fleet MPG for every pair of periods;
- an independent route: the fleet's rows with a planted loss (one chip generation's jobs lose
  half their productive time in the current period); plain Python over the job-day rows gives
  the change, the RG part and where it lies, which the decomposition must name first.
"""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
import json
import math
from collections.abc import Iterable
from pathlib import Path

import duckdb
import pytest

from mpg.compare import Comparison, compare_periods, parse_period
from mpg.compare.decompose import Ratios, split_m
from mpg.compare.period import Period
from mpg.core.errors import OptionsError
from mpg.pipelines.options import RunOptions
from mpg.simulate import simulate
from tests.support.cli import run_mpg
from tests.support.handmade import publish_rows

X = ("training", "jax", "tpu-v5e")
Y = ("serving", "pytorch", "gpu-h100")
D1, D2 = dt.date(2026, 1, 1), dt.date(2026, 1, 2)
BASE, CURRENT = Period(D1, D1), Period(D2, D2)


def _job_day(day: dt.date, job: str, slice_: tuple[str, str, str], *chip_s: float | None) -> dict:
    """A job_day_goodput row from wanted, all-allocated, productive and ideal chip-seconds (ideal
    None: unprofiled), with the published ratios."""
    wanted, allocated, productive, ideal = chip_s
    sg = allocated / wanted
    rg = productive / allocated if allocated else None
    pg = None if ideal is None else ideal / productive
    return {
        "day": day,
        "job_id": job,
        "metric_version": "v1",
        **dict(zip(("workload_class", "framework", "chip_generation"), slice_, strict=True)),
        "chips_requested": 1,
        "wanted_chip_s": wanted,
        "all_allocated_chip_s": allocated,
        "productive_chip_s": productive,
        "ideal_chip_s": ideal,
        "sg": sg,
        "rg": rg,
        "pg": pg,
        "mpg": None if pg is None or rg is None else sg * rg * pg,
    }


def _write_database(
    out: Path, job_days: Iterable[dict], ledger: Iterable[dict], **more: Iterable[dict]
) -> Path:
    """A published folder holding these rows (tests/support/handmade.py); `more` names other
    tables."""
    tables = {"job_day_goodput": list(job_days), "chip_time_ledger": list(ledger)}
    return publish_rows(out, {**tables, **{name: list(rows) for name, rows in more.items()}})


def _ledger(day: dt.date, job: str, **chip_s: float) -> list[dict]:
    return [
        {"day": day, "job_id": job, "metric_version": "v1", "category": c, "chip_s": v}
        for c, v in chip_s.items()
    ]


@pytest.fixture
def worked_example(tmp_path: Path) -> Path:
    """docs/compare.md's worked example: X loses half its productive time, Y triples its wanted
    time and its PG falls from 0.5 to 0.4."""
    job_days = [
        _job_day(D1, "x", X, 100, 80, 40, 16),
        _job_day(D2, "x", X, 100, 80, 20, 8),
        _job_day(D1, "y", Y, 100, 100, 60, 30),
        _job_day(D2, "y", Y, 300, 300, 180, 72),
    ]
    ledger = [
        *_ledger(D1, "x", ideal=16, program_loss=24, runtime_idle=40, scheduling=20),
        *_ledger(
            D2, "x", ideal=8, program_loss=12, lost_progress=30, runtime_idle=30, scheduling=20
        ),
        *_ledger(D1, "y", ideal=30, program_loss=30, runtime_idle=40),
        *_ledger(D2, "y", ideal=72, program_loss=108, runtime_idle=120),
    ]
    return _write_database(tmp_path / "out", job_days, ledger)


def _parts(part: dict) -> dict[str, float]:
    return {k: part[k] for k in ("mix", "sg", "rg", "pg", "coverage", "total") if k in part}


def test_worked_example_by_hand(worked_example: Path) -> None:
    result = run_mpg(
        "compare", "--out", worked_example, "--base", f"{D1}..{D1}", "--current", str(D2), "--json"
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    # every job-day profiled, so K = 1 and MPG = M* = sum_s w_s m_s: 0.23 -> 0.2
    assert got["base"]["mpg"] == pytest.approx(0.23, abs=1e-15)
    assert got["current"]["mpg"] == pytest.approx(0.2, abs=1e-15)
    assert got["change"] == pytest.approx(-0.03, abs=1e-15)
    expected_totals = {
        "mix": 0.0375,
        "sg": 0.0,
        "rg": -0.03,
        "pg": -0.0375,
        "coverage": 0.0,
        "total": -0.03,
    }
    assert _parts(got["parts"]) == pytest.approx(expected_totals, abs=1e-15)
    slices = [(s["workload_class"], s["framework"], s["chip_generation"]) for s in got["slices"]]
    assert slices == [Y, X]  # by |total|: -0.02375, -0.00625
    y, x = got["slices"]
    assert _parts(y["parts"]) == pytest.approx(
        {"mix": 0.01375, "sg": 0, "rg": 0, "pg": -0.0375, "total": -0.02375},
        abs=1e-15,
    )  # fmt: skip
    assert _parts(x["parts"]) == pytest.approx(
        {"mix": 0.02375, "sg": 0, "rg": -0.03, "pg": 0, "total": -0.00625},
        abs=1e-15,
    )  # fmt: skip
    assert [(p["chip_generation"], p["part"]) for p in got["top_parts"]] == [
        ("gpu-h100", "pg"), ("tpu-v5e", "rg"), ("tpu-v5e", "mix"), ("gpu-h100", "mix"),
    ]  # fmt: skip
    # X's ledger: lost_progress 0 -> 30%, program_loss 24% -> 12%, runtime_idle 40% -> 30%
    assert [(m["category"], m["base_share"], m["current_share"]) for m in x["ledger_moves"]] == [
        ("lost_progress", 0.0, 0.3),
        ("program_loss", 0.24, 0.12),
        ("runtime_idle", 0.4, 0.3),
    ]
    # the fleet: lost_progress 0 -> 7.5%, scheduling 10% -> 5% first
    assert [m["category"] for m in got["ledger_moves"][:2]] == ["lost_progress", "scheduling"]


def test_worked_example_terminal(worked_example: Path) -> None:
    result = run_mpg(
        "compare", "--out", worked_example, "--base", str(D1), "--current", str(D2),
        env={"COLUMNS": "120"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "Fleet MPG 0.2300 -> 0.2000 (-3.000 points), 2026-01-01..2026-01-01 -> "
        "2026-01-02..2026-01-02, metric v1"
    )
    rows = {
        " / ".join(line.split(" / ")[:3]).split("  ")[0].strip(): line.split() for line in lines
    }
    # slice, MPG base and current, then mix, SG, RG, PG and total in MPG points
    assert rows["serving / pytorch / gpu-h100"][-7:] == [
        "0.300", "0.240", "+1.375", "+0.000", "+0.000", "-3.750", "-2.375"
    ]  # fmt: skip
    assert rows["training / jax / tpu-v5e"][-7:] == [
        "0.160", "0.080", "+2.375", "+0.000", "-3.000", "+0.000", "-0.625"
    ]  # fmt: skip
    assert "training / jax / tpu-v5e: lost_progress 0.0% -> 30.0%, program_loss 24.0% -> " in (
        result.stdout
    )


def _costs(ledger: Iterable[dict], usd_per_chip_hour: dict[str, float | None]) -> list[dict]:
    """chip_time_cost rows for ledger rows: chip-hours x the price of the job's generation (the
    job ids here are their slice's first letter: x is tpu-v5e's, y gpu-h100's)."""
    generation = {"x": X[2], "y": Y[2]}
    rows = []
    for r in ledger:
        price = usd_per_chip_hour[generation[r["job_id"]]]
        rows.append({
            **r, "chip_generation": generation[r["job_id"]],
            "usd": None if price is None else r["chip_s"] / 3600 * price, "kwh": None,
            "usd_per_chip_hour": price, "price_source": "test", "watts_per_chip": None,
            "power_source": None, "pue": 1.1,
        })  # fmt: skip
    return rows


def _priced_example(worked: Path, out: Path, prices: dict[str, float | None]) -> Path:
    """docs/compare.md's worked example (the folder `worked`) in `out`, its ledger priced."""
    with duckdb.connect(str(worked / "mpg.duckdb"), read_only=True) as con:
        job_days = con.table("job_day_goodput").to_arrow_table().to_pylist()
        ledger = con.table("chip_time_ledger").to_arrow_table().to_pylist()
    return _write_database(out, job_days, ledger, chip_time_cost=_costs(ledger, prices))


@pytest.fixture
def priced_example(worked_example: Path, tmp_path: Path) -> Path:
    """The worked example with X (tpu-v5e) at $36 a chip-hour (0.01 a chip-second) and Y
    (gpu-h100) at $72 (0.02)."""
    return _priced_example(worked_example, tmp_path / "priced", {"tpu-v5e": 36.0, "gpu-h100": 72.0})


def test_dollars_by_hand(priced_example: Path) -> None:
    """Dollars lost are every ledger category but ideal, in dollars (chip-seconds x price). X:
    wanted $1 both periods; lost $0.84 = scheduling 0.20 + runtime 0.40 (runtime_idle) +
    program 0.24, then $0.92 = 0.20 + 0.60 (runtime_idle 0.30, lost_progress 0.30) + 0.12. Y:
    wanted $2 -> $6; lost $1.40 = runtime 0.80 + program 0.60, then $4.56 = 2.40 + 2.16. Fleet:
    $2.24 -> $5.48, +$3.24; its mean rate of loss F = (2.24/3 + 5.48/7) / 2 = 803/1050.
    X's dollars wanted did not move: no volume or mix; runtime 1 x (0.6 - 0.4) = +0.20, program
    1 x (0.12 - 0.24) = -0.12. Y: volume 4 x 803/1050 = 1606/525, mix 4 x ((0.70 + 0.76) / 2 -
    803/1050) = -73/525, program mean(U) 4 x (0.36 - 0.30) = +0.24, runtime 4 x 0 = 0."""
    result = run_mpg(
        "compare", "--out", priced_example, "--base", str(D1), "--current", str(D2), "--json"
    )
    assert result.returncode == 0, result.stderr
    dollars = json.loads(result.stdout)["dollars"]
    exact = pytest.approx
    assert dollars["base"] == {
        "wanted_usd": exact(3.0), "lost_usd": exact(2.24), "lost_scheduling_usd": exact(0.2),
        "lost_runtime_usd": exact(1.2), "lost_program_usd": exact(0.84),
        "lost_unprofiled_usd": 0.0, "unpriced_chip_s": 0.0,
        "reconciliation": "$2.24 lost = scheduling $0.20 + runtime $1.20 + program $0.84 + "
        "unprofiled $0.00",
        "usd_by_category": {"ideal": exact(0.76), "lost_progress": 0.0,
                            "program_loss": exact(0.84), "runtime_idle": exact(1.2),
                            "scheduling": exact(0.2)},
    }  # fmt: skip
    assert dollars["current"] == {
        "wanted_usd": exact(7.0), "lost_usd": exact(5.48), "lost_scheduling_usd": exact(0.2),
        "lost_runtime_usd": exact(3.0), "lost_program_usd": exact(2.28),
        "lost_unprofiled_usd": 0.0, "unpriced_chip_s": 0.0,
        "reconciliation": "$5.48 lost = scheduling $0.20 + runtime $3.00 + program $2.28 + "
        "unprofiled $0.00",
        "usd_by_category": {"ideal": exact(1.52), "lost_progress": exact(0.3),
                            "program_loss": exact(2.28), "runtime_idle": exact(2.7),
                            "scheduling": exact(0.2)},
    }  # fmt: skip
    assert dollars["change"] == exact(3.24)
    assert dollars["parts"] == exact({
        "volume": 1606 / 525, "mix": -73 / 525, "scheduling": 0.0, "runtime": 0.2,
        "program": 0.12, "unprofiled": 0.0, "total": 3.24,
    })  # fmt: skip
    by_slice = {(s["workload_class"], s["framework"], s["chip_generation"]): s["parts"]
                for s in dollars["slices"]}  # fmt: skip
    assert by_slice[X] == exact({"volume": 0.0, "mix": 0.0, "scheduling": 0.0, "runtime": 0.2,
                                 "program": -0.12, "unprofiled": 0.0, "total": 0.08})  # fmt: skip
    assert by_slice[Y] == exact({"volume": 1606 / 525, "mix": -73 / 525, "scheduling": 0.0,
                                 "runtime": 0.0, "program": 0.24, "unprofiled": 0.0,
                                 "total": 3.16})  # fmt: skip
    assert list(by_slice) == [Y, X]  # largest |total| first
    assert [m["category"] for m in dollars["moves"]] == ["runtime_idle", "program_loss", "ideal"]


def test_dollars_terminal(priced_example: Path) -> None:
    result = run_mpg(
        "compare", "--out", priced_example, "--base", str(D1), "--current", str(D2),
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert (
        "Dollars lost (every ledger category but ideal, priced chip-time): $2.24 -> $5.48 "
        "(+$3.24)" in " ".join(out.split())
    )
    assert (
        "base: $2.24 lost = scheduling $0.20 + runtime $1.20 + program $0.84 + unprofiled $0.00"
        in " ".join(out.split())
    )
    parts = {
        line.split(":")[0].strip(): line.split()[-1] for line in out.splitlines() if ":" in line
    }
    names = ("volume", "mix", "scheduling", "runtime", "program", "unprofiled")
    assert [parts[p] for p in names] == [
        "+$3.06", "-$0.14", "+$0.00", "+$0.20", "+$0.12", "+$0.00"
    ]  # fmt: skip
    # piped at 80 columns, no column of the slices' table is dropped and no figure cut short
    (y_row,) = [
        line for line in out.splitlines() if line.startswith(" serving / py") and "$" in line
    ]
    assert y_row.split()[-7:] == ["+$3.06", "-$0.14", "+$0.00", "+$0.00", "+$0.24", "+$0.00",
                                  "+$3.16"]  # fmt: skip
    assert (
        "Ledger dollars that moved most: runtime_idle $1.20 -> $2.70, program_loss $0.84 -> "
        in " ".join(out.split())
    )
    assert "Unpriced" not in out


def test_dollars_leave_out_unpriced_slices(worked_example: Path, tmp_path: Path) -> None:
    """Y (gpu-h100) without a price: dollars are X's alone (wanted $1 both periods, lost $0.84
    -> $0.92: runtime +0.20, program -0.12), and Y's 100 and 300 wanted chip-seconds are counted
    as unpriced, not guessed."""
    out = _priced_example(worked_example, tmp_path / "half", {"tpu-v5e": 36.0, "gpu-h100": None})
    comparison = compare_periods(out, BASE, CURRENT)
    d = comparison.dollars
    assert d is not None
    assert (d.base.lost, d.current.lost) == (pytest.approx(0.84), pytest.approx(0.92))
    assert (d.base.unpriced_chip_s, d.current.unpriced_chip_s) == (100.0, 300.0)
    assert (d.parts.runtime, d.parts.program) == (pytest.approx(0.2), pytest.approx(-0.12))
    assert d.parts.total == pytest.approx(0.08)
    assert [key for key, _ in d.slices] == [X]
    result = run_mpg(
        "compare", "--out", out, "--base", str(D1), "--current", str(D2), env={"COLUMNS": "200"}
    )
    assert (
        "Unpriced (no price for their chip generation, not in any dollar figure): 0.0 chip-h in "
        "base, 0.1 in current"
    ) in result.stdout
    assert "0.0 unpriced chip-hours not in it" in result.stdout  # 100 chip-seconds


def test_without_prices_dollars_are_not_compared(worked_example: Path) -> None:
    """The worked example has no chip_time_cost rows: no dollars, and the reason."""
    result = run_mpg(
        "compare", "--out", worked_example, "--base", str(D1), "--current", str(D2), "--json"
    )
    reason = (
        "dollars lost cannot be compared: the base period has no priced chip-time: its dollars "
        "lost are unknown (set [prices] in DIR/mpg.toml)"
    )
    assert json.loads(result.stdout)["dollars"] == {"unavailable": reason}
    terminal = run_mpg(
        "compare", "--out", worked_example, "--base", str(D1), "--current", str(D2),
        env={"COLUMNS": "300"},
    )  # fmt: skip
    assert f"Dollars: {reason}" in terminal.stdout


def test_edges_by_hand(tmp_path: Path) -> None:
    """E1 moves SG and RG in opposite ways (m unchanged), E2 is never profiled (its PG taken as
    the fleet's mean PG in both periods), E3 exists only in the current period."""
    e1, e2, e3 = ("training", "jax", "e1"), ("training", "jax", "e2"), ("serving", "jax", "e3")
    out = _write_database(
        tmp_path / "out",
        [
            _job_day(D1, "a", e1, 100, 50, 40, 20),
            _job_day(D2, "a", e1, 100, 80, 40, 20),
            _job_day(D1, "b", e2, 100, 100, 50, None),
            _job_day(D2, "b", e2, 100, 100, 100, None),
            _job_day(D2, "c", e3, 200, 200, 100, 80),
        ],
        [],
    )
    # base: A = 90/200, G = 20/40 = 0.5, MPG 0.225; current: A = 240/400, G = 100/140, MPG 3/7
    g = (0.5 + 5 / 7) / 2  # the fleet's mean PG, E2's PG in both periods
    # M* = sum_s w_s m_s, with m_e1 = 0.5 x 0.8 x 0.5 = 0.2 both, m_e2 = 0.5 g -> g, m_e3 = 0.4
    m0, m1 = 0.5 * 0.2 + 0.5 * 0.5 * g, 0.25 * 0.2 + 0.25 * g + 0.5 * 0.4
    k0, k1 = 0.225 / m0, (3 / 7) / m1
    k, m = (k0 + k1) / 2, (m0 + m1) / 2
    comparison = compare_periods(out, BASE, CURRENT)
    by_slice = {c.slice: c.parts for c in comparison.decomposition.slices}
    sg_rg = 0.375 * 0.2 * math.log(1.6)  # w̄ L(0.2, 0.2) ln(0.8 / 0.5), and -ln(0.5 / 0.8)
    expected = {
        # w 0.5 -> 0.25 at m 0.2; SG 0.5 -> 0.8 and RG 0.8 -> 0.5 cancel
        e1: (k * -0.25 * (0.2 - m), k * sg_rg, -k * sg_rg, 0.0),
        # w 0.5 -> 0.25, m 0.5 g -> g all by RG (SG 1 both, PG g both)
        e2: (k * -0.25 * (0.75 * g - m), 0.0, k * 0.375 * 0.5 * g, 0.0),
        # w 0 -> 0.5 at m 0.4: all of it mix
        e3: (k * 0.5 * (0.4 - m), 0.0, 0.0, 0.0),
    }
    for key, parts in expected.items():
        got = by_slice[key]
        assert (got.mix, got.sg, got.rg, got.pg) == pytest.approx(parts, abs=1e-15), key
        assert got.coverage == 0
    totals = comparison.decomposition.totals
    assert totals.coverage == pytest.approx(m * (k1 - k0), abs=1e-15)
    assert totals.total == pytest.approx(3 / 7 - 0.225, abs=1e-15)


@pytest.mark.parametrize(
    ("base", "current", "expected"),
    [
        # SG 0 in the base (nothing allocated): the whole change is SG's
        (Ratios(0, 0, 0.5), Ratios(0.5, 0.5, 0.5), (0.125, 0.0, 0.0)),
        # SG positive, RG 0 in the current period: the whole change is RG's
        (Ratios(0.5, 0.5, 0.4), Ratios(0.6, 0, 0.4), (0.0, -0.1, 0.0)),
        # PG 0 (ideal time 0) in the base: PG's
        (Ratios(1, 0.5, 0), Ratios(1, 0.5, 0.2), (0.0, 0.0, 0.1)),
        (Ratios(0, 0, 0.5), Ratios(0.6, 0, 0.5), (0.0, 0.0, 0.0)),
        # all positive: LMDI, L(0.25, 0.125) x ln of each ratio's ratio
        (
            Ratios(0.5, 0.5, 0.5),
            Ratios(1, 0.5, 0.5),
            (0.125 / math.log(2) * math.log(2), 0.0, 0.0),
        ),
    ],
)
def test_split_m_zeros(base: Ratios, current: Ratios, expected: tuple[float, float, float]) -> None:
    assert split_m(base, current) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-01-02..2026-01-01", "range '2026-01-02..2026-01-01' ends before it starts"),
        ("last week", "not a range of days: 'last week' is not a day (YYYY-MM-DD)"),
        ("2026-01-01...2026-01-02", "not a range of days"),
        ("2026-01-01..2026-01-02..2026-01-03", "not a range of days (YYYY-MM-DD..YYYY-MM-DD)"),
        (
            "2026-11-01..2026-11-31",
            "not a range of days: '2026-11-31' is not a date: day is out of range for month",
        ),
    ],
)
def test_bad_ranges(text: str, message: str) -> None:
    with pytest.raises(OptionsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_period(text)


@pytest.mark.parametrize(
    ("base", "current", "message"),
    [
        (
            "2026-01-01",
            "2025-12-30..2026-01-03",
            "the periods 2026-01-01..2026-01-01 and 2025-12-30..2026-01-03 overlap",
        ),
        (
            "2025-12-30..2026-01-01",
            "2026-01-02",
            "the base period 2025-12-30..2026-01-01 has days with no published job-day rows "
            "(metric version v1): 2025-12-30, 2025-12-31",
        ),
        (
            "2026-01-01",
            "2026-13-01",
            "not a range of days: '2026-13-01' is not a date: month must be in 1..12",
        ),
        (  # a base after the current period would explain the change with every sign flipped
            "2026-01-02",
            "2026-01-01",
            "the base period 2026-01-02..2026-01-02 comes after the current period "
            "2026-01-01..2026-01-01: the base is the earlier one (swap them to explain the change "
            "from the earlier to the later)",
        ),
        ("2026-01-01", "", "not a range of days: '' is not a day (YYYY-MM-DD)"),
    ],
)
def test_user_errors_are_one_line(
    worked_example: Path, base: str, current: str, message: str
) -> None:
    result = run_mpg("compare", "--out", worked_example, "--base", base, "--current", current)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"mpg: error: {message}\n")


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("v9", "unknown metric version v9 (known: v1, v2)"),
        (
            "v2",  # known, but not computed into this folder
            "the base period 2026-01-01..2026-01-01 has days with no published job-day rows "
            "(metric version v2): 2026-01-01",
        ),
    ],
)
def test_metric_version_errors(worked_example: Path, version: str, message: str) -> None:
    result = run_mpg(
        "compare", "--out", worked_example, "--base", str(D1), "--current", str(D2),
        "--metric-version", version,
    )  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"mpg: error: {message}\n")


@pytest.fixture(scope="module")
def fleet_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated fleet (30 jobs, 6 days) through the real pipeline."""
    from mpg.pipelines.run import run

    traces = tmp_path_factory.mktemp("fleet")
    simulate(seed=5, jobs=30, days=6, out=traces)
    out = tmp_path_factory.mktemp("fleet-out") / "out"
    run(RunOptions(traces=str(traces), out=str(out), buckets=8))
    return out


def _rows(out: Path, table: str) -> list[dict]:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        return con.table(table).order("all").to_arrow_table().to_pylist()


def test_parts_add_up_on_a_simulated_fleet(fleet_out: Path) -> None:
    days = sorted({r["day"] for r in _rows(fleet_out, "job_day_goodput")})
    assert len(days) == 6
    pairs = [((0, 0), (1, 1)), ((0, 1), (2, 3)), ((0, 2), (3, 5)), ((0, 4), (5, 5))]
    for (b0, b1), (c0, c1) in pairs:
        comparison = compare_periods(
            fleet_out, Period(days[b0], days[b1]), Period(days[c0], days[c1])
        )
        d = comparison.decomposition
        # the fleet MPG decomposed is the published one: goodput_by_slice's day rows agree
        published = _published_fleet_mpg(fleet_out, days[c0], days[c1])
        assert d.current_mpg == pytest.approx(published, rel=1e-12)
        parts = [c.parts for c in d.slices]
        assert abs(sum(p.total for p in parts) + d.totals.coverage - d.change) <= 1e-12
        assert abs(d.totals.total - d.change) <= 1e-12
        t = d.totals
        assert abs(t.mix + t.sg + t.rg + t.pg + t.coverage - d.change) <= 1e-12


def _dollars_lost(out: Path, first: dt.date, last: dt.date) -> tuple[float, float, float]:
    """Plain Python over the published rows: (dollars wanted, dollars lost, unpriced wanted
    chip-seconds) of the days first..last: chip_time_cost's usd summed, over every category and
    over every category but ideal; the wanted chip-seconds of job-days without a price."""
    costs = [r for r in _rows(out, "chip_time_cost") if first <= r["day"] <= last]
    usd = sum(r["usd"] for r in costs if r["usd"] is not None)
    lost = sum(r["usd"] for r in costs if r["usd"] is not None and r["category"] != "ideal")
    priced = {(r["day"], r["job_id"]) for r in costs if r["usd"] is not None}
    unpriced = sum(
        r["wanted_chip_s"]
        for r in _rows(out, "job_day_goodput")
        if first <= r["day"] <= last and (r["day"], r["job_id"]) not in priced
    )
    return usd, lost, unpriced


def test_dollars_lost_on_a_simulated_fleet(fleet_out: Path) -> None:
    """The fleet's generations are partly priced by the catalog (gpu-h100, tpu-v4): each
    period's dollars wanted, dollars lost and unpriced chip-time match plain Python over the
    published rows, and the dollar parts add up to the change."""
    days = sorted({r["day"] for r in _rows(fleet_out, "job_day_goodput")})
    pairs = [((0, 1), (2, 3)), ((0, 2), (3, 5)), ((2, 2), (3, 3))]
    for (b0, b1), (c0, c1) in pairs:
        base, current = Period(days[b0], days[b1]), Period(days[c0], days[c1])
        d = compare_periods(fleet_out, base, current).dollars
        assert d is not None
        for period, got in ((base, d.base), (current, d.current)):
            usd, lost, unpriced = _dollars_lost(fleet_out, period.first, period.last)
            assert got.usd == pytest.approx(usd, rel=1e-12)
            assert sum(got.by_category.values()) == pytest.approx(usd, rel=1e-12)
            assert got.lost == pytest.approx(lost, rel=1e-12)
            assert sum(got.lost_parts.values()) == pytest.approx(lost, rel=1e-12)
            assert got.unpriced_chip_s == pytest.approx(unpriced, rel=1e-12)
            assert unpriced > 0 and usd > 0
        tolerance = 1e-12 * (d.base.usd + d.current.usd)
        assert abs(d.parts.total - d.change) <= tolerance
        assert abs(sum(p.total for _, p in d.slices) - d.change) <= tolerance


def _published_fleet_mpg(out: Path, first: dt.date, last: dt.date) -> float:
    """SG x RG x PG of the fleet rows of goodput_by_slice summed over the days (plain Python;
    PG's denominator is pg_coverage x productive, as published)."""
    rows = [
        r
        for r in _rows(out, "goodput_by_slice")
        if first <= r["day"] <= last
        and r["workload_class"] is None
        and r["framework"] is None
        and r["chip_generation"] is None
    ]
    wanted = sum(r["wanted_chip_s"] for r in rows)
    productive = sum(r["productive_chip_s"] for r in rows)
    ideal = sum(r["ideal_chip_s"] or 0 for r in rows)
    profiled = sum((r["pg_coverage"] or 0) * r["productive_chip_s"] for r in rows)
    return productive / wanted * ideal / profiled


PLANT_DAYS = 7  # the current period: the base days moved a week on


def _planted(
    fleet_out: Path, out: Path, generation: str, profiled_only: bool = False
) -> tuple[list[dict], list[dict]]:
    """Base: the fleet's first 3 days (only the job-days with a PG if `profiled_only`); current:
    the same job-days a week later, except that `generation`'s jobs lose half their productive
    time (ideal with it: PG stays) to lost progress. Returns the base and current job-day rows."""
    rows = [
        r for r in _rows(fleet_out, "job_day_goodput") if r["pg"] is not None or not profiled_only
    ]
    kept = {(r["day"], r["job_id"]) for r in rows}
    first = min(r["day"] for r in rows)
    base = [r for r in rows if r["day"] < first + dt.timedelta(days=3)]
    planted_jobs = {(r["day"], r["job_id"]) for r in base if r["chip_generation"] == generation}
    current = []
    for r in base:
        moved = {**r, "day": r["day"] + dt.timedelta(days=PLANT_DAYS)}
        if (r["day"], r["job_id"]) in planted_jobs:
            moved = _job_day(
                moved["day"], r["job_id"],
                _slice(r),
                r["wanted_chip_s"], r["all_allocated_chip_s"], r["productive_chip_s"] / 2,
                None if r["ideal_chip_s"] is None else r["ideal_chip_s"] / 2,
            )  # fmt: skip
        current.append(moved)
    ledger = []
    for r in _rows(fleet_out, "chip_time_ledger"):
        key = (r["day"], r["job_id"])
        if r["day"] >= first + dt.timedelta(days=3) or key not in kept:
            continue
        ledger.append(r)
        moved = {**r, "day": r["day"] + dt.timedelta(days=PLANT_DAYS)}
        halved = ("ideal", "program_loss", "productive_unprofiled")
        if key in planted_jobs and r["category"] in halved:
            moved["chip_s"] = r["chip_s"] / 2
            ledger.append({**moved, "category": "lost_progress", "chip_s": r["chip_s"] / 2})
        ledger.append(moved)
    _write_database(out, base + current, ledger)
    return base, current


def _fleet(rows: list[dict]) -> tuple[float, float]:
    """(A, G) of job-day rows: productive / wanted, and ideal / productive over profiled rows."""
    wanted = sum(r["wanted_chip_s"] for r in rows)
    productive = sum(r["productive_chip_s"] for r in rows)
    profiled = [r for r in rows if r["pg"] is not None]
    ideal = sum(r["ideal_chip_s"] for r in profiled)
    return productive / wanted, ideal / sum(r["productive_chip_s"] for r in profiled)


def _compare_planted(out: Path, base: list[dict]) -> Comparison:
    first = min(r["day"] for r in base)
    return compare_periods(
        out,
        Period(first, first + dt.timedelta(days=2)),
        Period(first + dt.timedelta(days=PLANT_DAYS), first + dt.timedelta(days=PLANT_DAYS + 2)),
    )


def test_planted_loss_is_named_first(fleet_out: Path, tmp_path: Path) -> None:
    generation = "gpu-h100"
    base, current = _planted(fleet_out, tmp_path / "planted", generation)
    comparison = _compare_planted(tmp_path / "planted", base)
    d = comparison.decomposition
    # independently: the change is A x G of the rows; no slice's share of wanted time, SG or PG
    # moved, so there is no mix, SG or PG part: all of it is RG, and coverage where the planted
    # slices' productive time weighs in the published PG
    (a0, g0), (a1, g1) = _fleet(base), _fleet(current)
    assert d.change == pytest.approx(a1 * g1 - a0 * g0, rel=1e-12)
    assert (d.totals.mix, d.totals.sg, d.totals.pg) == pytest.approx((0, 0, 0), abs=1e-15)
    assert d.totals.rg + d.totals.coverage == pytest.approx(d.change, rel=1e-12)
    # the slice of the planted generation that lost most productive time comes first
    lost: dict[tuple, float] = {}
    for r in base:
        if r["chip_generation"] == generation:
            lost[_slice(r)] = lost.get(_slice(r), 0.0) + r["productive_chip_s"] / 2
    worst = max(lost, key=lambda k: lost[k])
    top = d.slices[0]
    assert top.slice == worst
    # summed per chip generation, the planted one comes first, with all of the RG part
    generation_first, parts = comparison.by_dimension("chip_generation")[0]
    assert generation_first == generation
    assert parts.rg == pytest.approx(d.totals.rg, rel=1e-12)
    largest = comparison.top_parts[0]
    assert (largest.slice, largest.part, largest.value) == (worst, "rg", top.parts.rg)
    # and lost progress is the ledger category that moved most (for the slice, tied with the
    # productive category it came from), by the share of wanted time it gained
    wanted = sum(r["wanted_chip_s"] for r in base)
    slice_wanted = sum(r["wanted_chip_s"] for r in base if _slice(r) == worst)
    moves = {m.category: m.change for m in comparison.slice_moves[worst]}
    assert moves["lost_progress"] == pytest.approx(lost[worst] / slice_wanted, rel=1e-12)
    assert moves["lost_progress"] == pytest.approx(max(map(abs, moves.values())), rel=1e-12)
    assert comparison.fleet_moves[0].category == "lost_progress"
    assert comparison.fleet_moves[0].change == pytest.approx(sum(lost.values()) / wanted, rel=1e-12)


def test_planted_loss_on_a_profiled_fleet_is_the_textbook_shift_share(
    fleet_out: Path, tmp_path: Path
) -> None:
    """Every job-day profiled: fleet MPG is ideal / wanted, the wanted-weighted mean of the
    slices' MPG, so each planted slice's RG part is its lost ideal chip-time over the fleet's
    wanted chip-time (plain Python over the rows), and there is no coverage part."""
    generation = "tpu-v5e"
    base, current = _planted(fleet_out, tmp_path / "planted", generation, profiled_only=True)
    comparison = _compare_planted(tmp_path / "planted", base)
    d = comparison.decomposition
    wanted = sum(r["wanted_chip_s"] for r in base)
    ideal = sum(r["ideal_chip_s"] for r in base)
    assert (d.base_mpg, d.current_mpg) == pytest.approx(
        (ideal / wanted, sum(r["ideal_chip_s"] for r in current) / wanted), rel=1e-12
    )
    lost: dict[tuple, float] = {}
    for r in base:
        if r["chip_generation"] == generation:
            lost[_slice(r)] = lost.get(_slice(r), 0.0) + r["ideal_chip_s"] / 2
    assert len(lost) >= 2
    parts = {c.slice: c.parts for c in d.slices}
    for key, chip_s in lost.items():
        assert (parts[key].mix, parts[key].sg, parts[key].pg) == pytest.approx((0, 0, 0), abs=1e-15)
        assert parts[key].rg == pytest.approx(-chip_s / wanted, rel=1e-12), key
    assert all(p.total == pytest.approx(0, abs=1e-15) for k, p in parts.items() if k not in lost)
    assert d.totals.coverage == pytest.approx(0, abs=1e-15)
    assert d.totals.rg == pytest.approx(-sum(lost.values()) / wanted, rel=1e-12)
    assert comparison.by_dimension("chip_generation")[0][0] == generation


def _slice(row: dict) -> tuple[str, str, str]:
    return (row["workload_class"], row["framework"], row["chip_generation"])


@pytest.mark.parametrize("module", ["mpg.compare.decompose", "mpg.compare.period"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert (result.failed, result.attempted > 0) == (0, True)
