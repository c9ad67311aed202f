"""`mpg report`'s words and tables against the published tables: how the opening figures meet the
ledger, what the data is and covers, its quality, the sections whose tables a later mpg publishes;
and every chart's spec valid Vega-Lite. (The charts' numbers: tests/e2e/test_report.py.)"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

import altair as alt
import jsonschema
import pytest

from mpg.report.data import read_report_data
from tests.support.cli import run_mpg
from tests.support.report_fleet import (
    HOSTILE_FRAMEWORK,
    HOSTILE_TRACES,
    published_rows,
    rows_with,
    specs_of,
)


@pytest.fixture(scope="module")
def out(hostile_out: Path) -> Path:
    return hostile_out


@pytest.fixture(scope="module")
def page(out: Path) -> str:
    target = out.parent / "sections.html"
    done = run_mpg("report", "--out", out, "--file", target)
    assert done.returncode == 0, done.stderr
    return target.read_text(encoding="utf-8")


def _section(page: str, section_id: str) -> str:
    start = page.index(f'<section id="{section_id}">')
    return page[start : page.index("</section>", start)]


def _text(markup: str) -> str:
    """The text a browser shows for `markup` (tags dropped, entities read back), spaces
    collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def _fleet(out: Path) -> dict[str, float]:
    rows = published_rows(out, "job_day_goodput_current")
    wanted = sum(r["wanted_chip_s"] for r in rows)
    allocated = sum(r["all_allocated_chip_s"] for r in rows)
    productive = sum(r["productive_chip_s"] for r in rows)
    profiled = sum(r["productive_chip_s"] for r in rows if r["pg"] is not None)
    ideal = sum(r["ideal_chip_s"] for r in rows if r["pg"] is not None)
    pg = ideal / profiled
    return {
        "wanted": wanted,
        "productive": productive,
        "profiled": profiled,
        "ideal": ideal,
        "pg": pg,
        "coverage": profiled / productive,
        "mpg": allocated / wanted * productive / allocated * pg,
    }


def test_the_page_says_why_the_ledger_ends_below_fleet_mpg(out: Path, page: str) -> None:
    """Ideal / wanted = MPG x PG coverage exactly, and the page says so with the figures."""
    f = _fleet(out)
    assert f["ideal"] / f["wanted"] == pytest.approx(f["mpg"] * f["coverage"], rel=1e-12)
    ledger_ideal = sum(
        r["chip_s"]
        for r in published_rows(out, "chip_time_ledger_current")
        if r["category"] == "ideal"
    )
    assert ledger_ideal == pytest.approx(f["ideal"], rel=1e-12)
    start = page.index('<p class="reconcile">')
    shown = _text(page[start : page.index("</p>", start)])
    unprofiled = (f["productive"] - f["profiled"]) / 3600
    assert shown == (
        f"The ledger below ends at {f['ideal'] / 3600:,.1f} ideal chip-hours, "
        f"{f['ideal'] / f['wanted']:.2%} of wanted, not fleet MPG's {f['mpg']:.2%}: PG is "
        f"measured on the {f['coverage']:.1%} of productive chip-time that had a profile, and the "
        f"other {unprofiled:,.1f} productive chip-hours (productive_unprofiled) have no ideal "
        f"time. MPG counts them at the profiled PG, {f['pg']:.2%}; the ledger cannot. So ideal / "
        f"wanted = MPG x PG coverage = {f['mpg']:.2%} x {f['coverage']:.1%}."
    )
    # The waterfall marks fleet MPG x wanted, where ideal would end were every hour profiled.
    (mark,) = rows_with(specs_of(page)["waterfall"], "at")
    assert mark["at"] == pytest.approx(f["mpg"] * f["wanted"] / 3600, rel=1e-12)
    figures = _text(_section(page, "summary"))
    for label, value in [("fleet MPG", f["mpg"]), ("ideal / wanted", f["ideal"] / f["wanted"])]:
        assert f"{label} {value:.2%}" in figures


def test_about_this_data_names_the_publishing_run_and_the_days(out: Path, page: str) -> None:
    (run,) = published_rows(out, "runs")
    shown = _text(_section(page, "about"))
    assert f"by run {run['run_id']} (run)" in shown
    assert run["ended_at"].strftime("%Y-%m-%d %H:%M UTC") in shown
    assert f"{run['input_files']:,} files, {run['input_bytes']:,} bytes, from " in shown
    assert f"mpg version {run['code_version']}" in shown
    assert "metric versions published v1" in shown
    # The traces folder's name is markup: escaped in the page, shown whole as text.
    assert run["traces"].endswith(HOSTILE_TRACES)
    assert f"from {run['traces']}" in shown
    days = published_rows(out, "job_day_goodput_current")
    jobs = len({r["job_id"] for r in days})
    assert (
        f"data, metric version v1 2026-11-20 to 2026-11-22: 3 days with job-days, "
        f"{len(days)} job-days of {jobs} jobs"
    ) in shown


def test_data_quality_shows_the_counts_the_quarantine_and_the_expectations(
    out: Path, page: str
) -> None:
    shown = _text(_section(page, "quality"))
    for c in published_rows(out, "record_counts"):
        assert c["records_read"] == c["accepted"] + c["duplicates"] + c["quarantined"]
        cells = (c["records_read"], c["accepted"], c["duplicates"], c["quarantined"])
        assert f"{c['source']} " + " ".join(f"{n:,}" for n in cells) + " yes" in shown
    quarantine = published_rows(out, "quarantine")
    expected = Counter((q["source"], q["reason"].split(":")[0]) for q in quarantine)
    plotted = rows_with(specs_of(page)["quarantine"], "reason_kind")
    assert {(v["source"], v["reason_kind"]): v["records"] for v in plotted} == expected
    # The hostile framework is quoted by its reason: data in the chart, never markup.
    hostile = next(
        v for v in plotted if v["source"] == "scheduler" and v["reason_kind"] == "unknown framework"
    )
    assert (hostile["records"], hostile["reasons"]) == (2, 2)
    assert hostile["example"] == f"unknown framework: {HOSTILE_FRAMEWORK}"
    results = published_rows(out, "validation_results")
    failed = [r for r in results if not r["success"]]
    assert f"Expectations: {len(results)} checked, {len(failed)} not met" in shown


def test_the_analyses_tables_are_found_through_the_connection(out: Path, page: str) -> None:
    """The issue 15 tables and the checkpoint roll-up view are looked for through the connection,
    found, and drawn: their sections are not marked absent."""
    tables = read_report_data(out, "v1", None, None).tables
    expected = {"chip_time_cost", "checkpoint_advice", "checkpoint_advice_by_slice"}
    assert expected | {"step_time_stats", "step_rank_stragglers"} <= tables
    for section in ("cost", "checkpoints", "step-times"):
        assert f'<a href="#{section}">' in page
        assert "Not published by this mpg version" not in _text(_section(page, section))


def test_every_chart_is_valid_vega_lite(page: str) -> None:
    """The report builds its charts with Altair's checks off (they took most of its time):
    each finished spec is checked here once against the Vega-Lite schema Altair writes for."""
    schema = alt.vegalite.v6.schema.core.load_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    specs = specs_of(page)
    assert len(specs) == 18
    for chart_id, spec in specs.items():
        errors = [e.message[:200] for e in validator.iter_errors(spec)]
        assert errors == [], chart_id
