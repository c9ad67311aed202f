"""`mpg report`'s dollars and kWh, checkpoint advice and step-time outliers, against the published
tables recomputed here in plain Python (and the stragglers of `tests/support/report_fleet.py`'s
ranked job, worked out by hand); kWh called an estimate wherever it shows; the comparison's dollars.
(The page in a browser: tests/e2e/test_report_browser.py.)
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path

import pytest

from mpg.compare import compare_periods, parse_period
from mpg.compare.dollars import DOLLAR_PART_NAMES
from mpg.report.advice import checkpoint_section
from mpg.report.blocks import Figures, Table
from mpg.report.costs import cost_section
from mpg.report.data import (
    CHECKPOINT_JOBS,
    MIN_STEPS,
    STEP_OUTLIERS,
    ReportData,
    read_report_data,
)
from tests.support.cli import run_mpg
from tests.support.report_fleet import (
    RANKED_JOB,
    RANKED_STEPS,
    RANKS,
    datasets_of,
    published_rows,
    rows_with,
    specs_of,
)

BASE, CURRENT = "2026-11-20", "2026-11-21..2026-11-22"


@pytest.fixture(scope="module")
def out(hostile_out: Path) -> Path:
    return hostile_out


@pytest.fixture(scope="module")
def specs(out: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The charts of the report with `--compare BASE CURRENT`."""
    target = tmp_path_factory.mktemp("analyses") / "report.html"
    done = run_mpg("report", "--out", out, "--file", target, "--compare", BASE, CURRENT)
    assert done.returncode == 0, done.stderr
    return specs_of(target.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def data(out: Path) -> ReportData:
    return read_report_data(out, "v1", None, None)


def _costs(out: Path) -> list[dict]:
    return published_rows(out, "chip_time_cost_current")


def _approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9)


def test_dollars_and_kwh_per_day_and_category(out: Path, specs: dict) -> None:
    """The daily area is chip_time_cost's priced rows summed per day and category; the kWh panel
    its kWh per day."""
    usd: dict[tuple[str, str], float] = defaultdict(float)
    kwh: dict[str, float] = defaultdict(float)
    for r in _costs(out):
        if r["usd"] is not None:
            usd[(str(r["day"]), r["category"])] += r["usd"]
        kwh[str(r["day"])] += r["kwh"] or 0.0
    drawn = rows_with(specs["cost-days"], "usd", "category", "day")
    assert {(r["day"], r["category"]): r["usd"] for r in drawn} == {
        k: _approx(v) for k, v in usd.items()
    }
    (energy,) = [rows for rows in datasets_of(specs["cost-days"]) if "category" not in rows[0]]
    assert {r["day"]: r["kwh"] for r in energy} == {k: _approx(v) for k, v in kwh.items()}


def test_dollars_per_slice(out: Path, specs: dict) -> None:
    """Each slice's dollars per category: the cost rows of its job-days, summed."""
    slice_of = {(r["day"], r["job_id"]): r for r in published_rows(out, "job_day_goodput_current")}
    expected: dict[tuple[str, str, str], float] = defaultdict(float)
    for r in _costs(out):
        if r["usd"]:
            job_day = slice_of[(r["day"], r["job_id"])]
            for kind in ("chip_generation", "workload_class", "framework"):
                expected[(kind, job_day[kind], r["category"])] += r["usd"]
    drawn = [row for rows in datasets_of(specs["cost-slices"]) for row in rows]  # one per kind
    assert len(datasets_of(specs["cost-slices"])) == 3
    assert {(r["slice_kind"], r["slice"], r["category"]): r["usd"] for r in drawn} == {
        k: _approx(v) for k, v in expected.items()
    }


def test_unpriced_generations_are_named_with_their_chip_hours(out: Path, data: ReportData) -> None:
    unpriced: dict[str, float] = defaultdict(float)
    for r in _costs(out):
        if r["usd"] is None:
            unpriced[r["chip_generation"]] += r["chip_s"] / 3600
    assert unpriced  # the catalog prices only gpu-h100 and tpu-v4
    (table,) = [b for b in cost_section(data).blocks if isinstance(b, Table)]
    wanted = sum(r["chip_s"] for r in _costs(out)) / 3600
    assert table.rows == tuple(
        (g, f"{h:,.1f}", f"{h / wanted:.1%}")
        for g, h in sorted(unpriced.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def test_dollars_lost_are_every_category_but_ideal_in_dollars(out: Path, data: ReportData) -> None:
    """Plain Python over chip_time_cost: dollars wanted are every priced row's usd, dollars lost
    those of every category but ideal; the page's figures and reconciliation say the same."""
    usd = sum(r["usd"] for r in _costs(out) if r["usd"] is not None)
    lost = sum(r["usd"] for r in _costs(out) if r["usd"] is not None and r["category"] != "ideal")
    fleet = data.fleet
    assert (fleet["wanted_usd"], fleet["lost_usd"]) == (_approx(usd), _approx(lost))
    figures = {f.label: f.value for b in cost_section(data).blocks if isinstance(b, Figures)
               for f in b.figures}  # fmt: skip
    assert figures["dollars wanted"] == f"${usd:,.2f}"
    assert figures["dollars lost"] == f"${lost:,.2f}"
    parts = [fleet[f"lost_{p}_usd"] for p in ("scheduling", "runtime", "program", "unprofiled")]
    assert sum(parts) == _approx(lost)
    reconcile = [b.text for b in cost_section(data).blocks if getattr(b, "kind", "") == "lost"]
    assert reconcile[0].startswith(
        f"Lost: ${lost:,.2f} lost = scheduling ${parts[0]:,.2f} + runtime ${parts[1]:,.2f} + "
        f"program ${parts[2]:,.2f} + unprofiled ${parts[3]:,.2f}; "
    )
    # the dollars of the categories but ideal (the category bars) add up to it too
    categories = {r["category"]: r["usd"] for r in data.categories.iter_rows(named=True)}
    assert sum(v for c, v in categories.items() if c != "ideal") == _approx(lost)


def _titles(node: object) -> list[str]:
    """Every axis, legend and tooltip title in a spec."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("title"), str):
            found.append(node["title"])
        for value in node.values():
            found += _titles(value)
    elif isinstance(node, list):
        for value in node:
            found += _titles(value)
    return found


def test_kwh_is_called_an_estimate_wherever_it_shows(specs: dict, data: ReportData) -> None:
    titles = [t for spec in specs.values() for t in _titles(spec) if "kwh" in t.lower()]
    assert len(titles) >= 4
    assert all("estimate" in t for t in titles), titles
    section = cost_section(data)
    texts = [section.intro] + [c.caption for c in section.charts]
    texts += [f"{f.label} {f.note}" for b in section.blocks if isinstance(b, Figures)
              for f in b.figures]  # fmt: skip
    assert all("estimate" in t for t in texts if "kWh" in t), texts


def test_checkpoint_jobs_are_ranked_by_expected_savings(out: Path, specs: dict) -> None:
    advised = [r for r in published_rows(out, "checkpoint_advice") if r["advice"] == "change"]
    ranked = sorted(advised, key=lambda r: (-r["chip_hours_saved"], r["job_id"]))
    drawn = rows_with(specs["checkpoint-jobs"], "saving_rank", "advised_interval_min")
    assert [r["job_id"] for r in drawn] == [r["job_id"] for r in ranked[:CHECKPOINT_JOBS]]
    for got, row in zip(drawn, ranked, strict=False):
        assert got["observed_interval_min"] == _approx(row["observed_interval_s"] / 60)
        assert got["advised_interval_min"] == _approx(row["advised_interval_s"] / 60)
        for column in ("rg", "rg_predicted", "rg_advised", "chip_hours_saved"):
            assert got[column] == row[column]


def test_checkpoint_slices_are_the_views_roll_up(out: Path, data: ReportData) -> None:
    """The per-slice table: the fleet first (every job, their savings added up), then each
    chip generation, workload class and framework of the view."""
    advice = published_rows(out, "checkpoint_advice")
    (table,) = [b for b in checkpoint_section(data).blocks if isinstance(b, Table)]
    fleet = table.rows[0]
    assert fleet[:2] == ("fleet", f"{len(advice):,}")
    saved = sum(r["chip_hours_saved"] for r in advice)
    assert fleet[9] == f"{saved:,.1f}"
    view = published_rows(out, "checkpoint_advice_by_slice")
    one_column = [
        r for r in view
        if sum(r[c] is not None for c in ("workload_class", "framework", "chip_generation")) == 1
    ]  # fmt: skip
    assert len(table.rows) == 1 + len(one_column)
    generations = {r["chip_generation"] for r in advice}
    assert {row[0] for row in table.rows if row[0].startswith("chip generation: ")} == {
        f"chip generation: {g}" for g in generations
    }


def test_step_outliers_rank_the_largest_slow_step_shares(out: Path, specs: dict) -> None:
    """Job-days of at least MIN_STEPS kept steps, ranked by their slow steps' share."""
    stats = [
        r
        for r in published_rows(out, "step_time_stats")
        if r["slow_step_share"] is not None and r["steps"] >= MIN_STEPS
    ]
    assert len(stats) < len(published_rows(out, "step_time_stats"))  # some are too short
    ranked = sorted(
        stats, key=lambda r: (-r["slow_step_share"], -r["slow_step_chip_s"], r["job_id"], r["day"])
    )[:STEP_OUTLIERS]
    drawn = rows_with(specs["step-outliers"], "share_rank", "slow_step_share")
    assert [(r["job_id"], r["day"]) for r in drawn] == [
        (r["job_id"], str(r["day"])) for r in ranked
    ]
    assert [r["slow_step_share"] for r in drawn] == [r["slow_step_share"] for r in ranked]
    assert [r["p99_step_s"] for r in drawn] == [r["p99_step_s"] for r in ranked]


def test_stragglers_by_hand(specs: dict) -> None:
    """The ranked job's 30 steps on 4 ranks: rank 2 the slowest of 20, rank 0 of the other 10
    (tests/support/report_fleet.py); every rank reported every step."""
    drawn = rows_with(specs["stragglers"], "slowest_share", "rank")
    assert [(r["job_id"], r["day"], r["rank"]) for r in drawn] == [
        (RANKED_JOB, "2026-11-21", rank) for rank in range(RANKS)
    ]
    assert [r["steps"] for r in drawn] == [RANKED_STEPS] * RANKS
    assert [r["slowest_steps"] for r in drawn] == [10, 0, 20, 0]
    assert [r["slowest_share"] for r in drawn] == [pytest.approx(x) for x in (1 / 3, 0, 2 / 3, 0)]


def test_the_comparison_draws_the_change_in_dollars_lost(out: Path, specs: dict) -> None:
    """Base dollars lost, the parts of their change, current: `compare_periods`' figures."""
    comparison = compare_periods(out, parse_period(BASE), parse_period(CURRENT))
    d = comparison.dollars
    assert d is not None
    drawn = rows_with(specs["compare-dollars"], "bar_start", "label")
    assert [r["label"] for r in drawn] == ["base $ lost", *DOLLAR_PART_NAMES, "current $ lost"]
    assert [r["value"] for r in drawn] == [
        d.base.lost,
        *(getattr(d.parts, n) for n in DOLLAR_PART_NAMES),
        d.current.lost,
    ]
    assert drawn[-2]["bar_end"] == pytest.approx(d.current.lost, rel=1e-12)


def test_absent_analysis_tables_say_so(data: ReportData) -> None:
    """A folder whose mpg did not publish checkpoint_advice (or the view) gets a note, not a
    failure."""
    bare = dataclasses.replace(data, checkpoint_jobs=None, checkpoint_slices=None)
    notes = [b.text for b in checkpoint_section(bare).blocks]
    assert notes == [
        "Not published by this mpg version: its database has no table checkpoint_advice.",
        "Not published by this mpg version: its database has no table checkpoint_advice_by_slice.",
    ]
