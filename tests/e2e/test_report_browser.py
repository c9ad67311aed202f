"""The report in a real headless Chromium (Debian's `chromium`, which `make test` installs), as a
reader opens it: from a file, with the network off, in a 1400 px window and a 1280 px one. It
loads without a console message or a page error, every chart draws marks of every kind it
declares (counted in each Vega view's scenegraph), the page fills the window without scrolling
sideways (no chart, table or headline figure wider than it), clicking a slice's bar shows that
slice's worst jobs, the hostile job's id and owner show as text and run neither, and it leaves a
screenshot (its path printed; `pytest -s` shows it).

A missing browser fails the test rather than skipping it: CI must not pass without it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from mpg.definitions.figures import NONE_NAMED
from tests.support.cli import run_mpg
from tests.support.report_fleet import (
    HOSTILE_JOB,
    HOSTILE_OWNER,
    published_rows,
    specs_of,
)

WIDTH = 1400
NARROW = 1280  # a laptop's window: the page must fit it too

# What is wider than the window, or than its own box: every chart's drawing, every table, and
# every headline figure whose text runs out of its card.
_OVERFLOWS = """(width) => [
  ...[...document.querySelectorAll("div.chart svg, table")]
    .filter((e) => e.getBoundingClientRect().right > width + 0.5)
    .map((e) => (e.closest("div.chart") || e).id || e.tagName),
  ...[...document.querySelectorAll(".figure")]
    .filter((e) => e.scrollWidth > e.clientWidth + 0.5)
    .map((e) => e.querySelector(".label").textContent),
]"""

# Per data mark of a Vega view (axes, legends and titles left out), how many items it drew.
_MARK_ITEMS = """(id) => {
  const counts = {};
  const walk = (node) => {
    if (node.marktype) {
      if (node.role === "mark") counts[node.name] = (counts[node.name] || 0) + node.items.length;
      if (node.marktype === "group") node.items.forEach((g) => (g.items || []).forEach(walk));
    } else if (node.items) node.items.forEach(walk);
  };
  walk(window.mpgViews[id].scenegraph().root);
  return counts;
}"""

# The jobs a worst-jobs panel shows, in its order: the data of its owners' text marks.
_SHOWN_JOBS = """([id, name]) => {
  const found = [];
  const walk = (node) => {
    if (node.marktype) {
      if (node.name && node.name.includes(name)) found.push(...node.items.map((i) => i.datum));
      if (node.marktype === "group") node.items.forEach((g) => (g.items || []).forEach(walk));
    } else if (node.items) node.items.forEach(walk);
  };
  walk(window.mpgViews[id].scenegraph().root);
  return found.sort((a, b) => a.rank - b.rank).map((d) => d.job_id);
}"""


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("no chromium on the PATH: `make test` installs it (apt-get install chromium)")
    return found


def _open(page: Page, report: Path, events: list[str]) -> None:
    """Load the report, recording every console message, page error, dialog and request."""
    page.on("console", lambda m: events.append(f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: events.append(f"page error: {e}"))
    page.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: events.append(f"request: {r.url}"))
    page.goto(report.as_uri())
    page.wait_for_function("document.body.dataset.rendered !== undefined", timeout=30_000)


@pytest.fixture(scope="module")
def out(hostile_out: Path) -> Path:
    return hostile_out


def _write_report(out: Path, name: str, *options: str) -> Path:
    report = out.parent / name
    done = run_mpg("report", "--out", out, "--file", report, *options)
    assert done.returncode == 0, done.stderr
    return report


@pytest.fixture(scope="module")
def report(out: Path) -> Path:
    return _write_report(out, "report.html")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium())
        yield browser
        browser.close()


def _new_page(browser: Browser, width: int = WIDTH) -> Page:
    context = browser.new_context(offline=True, viewport={"width": width, "height": 900})
    return context.new_page()


def _render(browser: Browser, report: Path, screenshot: Path, width: int = WIDTH) -> Page:
    """Open the report and check it loads quietly, draws every chart as an SVG of real size whose
    every data mark drew something, and fits the window's width while using most of it."""
    chart_ids = list(specs_of(report.read_text(encoding="utf-8")))
    events: list[str] = []
    page = _new_page(browser, width)
    _open(page, report, events)
    charts = page.evaluate(
        """() => [...document.querySelectorAll("div.chart")].map((div) => {
            const svgs = div.querySelectorAll("svg.marks");
            const box = svgs.length && svgs[0].getBoundingClientRect();
            return [div.id, svgs.length, box ? box.width : 0, box ? box.height : 0];
        })"""
    )
    page.screenshot(path=screenshot, full_page=True)
    print(f"screenshot: {screenshot}")

    assert events == [f"request: {report.as_uri()}"]
    assert page.evaluate("document.body.dataset.rendered") == str(len(chart_ids))
    assert [c[:2] for c in charts] == [[chart_id, 1] for chart_id in chart_ids]
    for chart_id, _, drawn_width, drawn_height in charts:
        assert drawn_width > 100 and drawn_height > 100, chart_id
    for chart_id in chart_ids:
        drawn = page.evaluate(_MARK_ITEMS, chart_id)
        assert drawn and all(n > 0 for n in drawn.values()), (chart_id, drawn)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(_OVERFLOWS, width) == []
    assert max(drawn for _, _, drawn, _ in charts) > 0.8 * width
    assert screenshot.stat().st_size > 50_000
    return page


def test_the_report_renders_in_chromium(report: Path, browser: Browser, tmp_path: Path) -> None:
    chart_ids = list(specs_of(report.read_text(encoding="utf-8")))
    # the issue 15 sections: dollars and kWh, checkpoint advice, step-time outliers
    assert chart_ids[11:17] == [
        "cost-days", "cost-categories", "cost-slices", "checkpoint-jobs", "step-outliers",
        "stragglers",
    ]  # fmt: skip
    assert chart_ids[8:11] == ["worst-jobs", "worst-unpriced", "by-team"]
    assert len(chart_ids) == 18
    page = _render(browser, report, tmp_path / "report.png")
    # The hostile job's generation has no price: the chart of unpriced jobs names it on its axis
    # and its owner beside its bar, as text (the slices' panels show the fleet's worst, all
    # priced, until a slice is picked); the page holds its own three scripts and no image.
    unpriced = page.locator("#worst-unpriced")
    for text in (HOSTILE_JOB, HOSTILE_OWNER):
        assert unpriced.get_by_text(text).first.is_visible(), text
    for text in ("Jobs that lost the most dollars", "What to fix first", "Per chip generation"):
        assert page.get_by_text(text, exact=True).first.is_visible(), text
    assert page.evaluate("document.querySelectorAll('script').length") == 3
    assert page.evaluate("document.querySelectorAll('img').length") == 0


def test_the_report_fits_a_1280_px_window(report: Path, browser: Browser, tmp_path: Path) -> None:
    """The same page in a laptop's window: nothing wider than it, no headline figure running out
    of its card."""
    _render(browser, report, tmp_path / "narrow.png", NARROW)


def _worst(out: Path, kind: str | None, value: str | None, limit: int) -> list[str]:
    """The worst jobs of one slice or of the fleet, recomputed from the published rows: by
    dollars lost (every ledger category but ideal), those without a price after the priced ones,
    by chip-hours lost."""
    slice_of = {r["job_id"]: r for r in published_rows(out, "job_day_goodput_current")}
    lost: dict[str, float] = {}
    usd: dict[str, float | None] = {}
    for row in published_rows(out, "chip_time_cost_current"):
        if row["category"] != "ideal":
            lost[row["job_id"]] = lost.get(row["job_id"], 0.0) + row["chip_s"]
            priced = row["usd"] is not None
            usd[row["job_id"]] = (usd.get(row["job_id"]) or 0.0) + row["usd"] if priced else None
    jobs = [j for j in lost if kind is None or slice_of[j][kind] == value]
    return sorted(jobs, key=lambda j: (usd[j] is None, -(usd[j] or 0.0), -lost[j], j))[:limit]


def test_clicking_a_slice_shows_its_worst_jobs(
    out: Path, report: Path, browser: Browser, tmp_path: Path
) -> None:
    """A click on tpu-v5p's bar (as a reader clicks: the mouse on the drawn bar) picks it: the
    panel beside lists tpu-v5p's 10 worst jobs, the hostile one first, and its owner as text;
    a double-click clears the pick and the fleet's 10 worst come back."""
    page = _new_page(browser)
    _open(page, report, [])
    chart = page.locator("#by-chip-generation")
    shown = ("by-chip-generation", "chip_generation_worst_owners")
    assert page.evaluate(_SHOWN_JOBS, shown) == _worst(out, None, None, 10)

    # tpu-v5p's scheduling part: the hostile job's 6,144 chip-hours, wide enough to click.
    bar = chart.locator(
        'path[aria-roledescription="bar"]'
        '[aria-label*="chip generation: tpu-v5p;"][aria-label*="category: scheduling;"]'
    )
    bar.click()
    expected = _worst(out, "chip_generation", "tpu-v5p", 10)
    assert expected[0] == HOSTILE_JOB and len(expected) < 10  # a small slice: all its jobs
    page.wait_for_function(
        f"([id, name]) => ({_SHOWN_JOBS})([id, name]).length == {len(expected)}", arg=list(shown)
    )
    assert page.evaluate(_SHOWN_JOBS, shown) == expected
    assert chart.get_by_text(HOSTILE_JOB, exact=True).is_visible()
    assert chart.get_by_text("Worst jobs of tpu-v5p", exact=True).is_visible()
    page.screenshot(path=tmp_path / "picked.png", full_page=True)
    print(f"screenshot: {tmp_path / 'picked.png'}")

    bar.dblclick()
    page.wait_for_function(
        f"([id, name]) => ({_SHOWN_JOBS})([id, name]).length == 10", arg=list(shown)
    )
    assert page.evaluate(_SHOWN_JOBS, shown) == _worst(out, None, None, 10)


def test_clicking_a_team_shows_its_worst_jobs(
    out: Path, report: Path, browser: Browser, tmp_path: Path
) -> None:
    """A click on team-chat's bar picks it: the panel beside lists team-chat's 10 worst jobs
    (by the one ranking, recomputed here from the published rows); a click on the bar of the
    jobs whose input named no team picks those (the hostile job among them); a double-click
    clears the pick and the fleet's 10 worst come back."""
    page = _new_page(browser)
    _open(page, report, [])
    chart = page.locator("#by-team")
    shown = ("by-team", "team_worst_owners")
    assert page.evaluate(_SHOWN_JOBS, shown) == _worst(out, None, None, 10)
    for label, team in (("team-chat", "team-chat"), (NONE_NAMED, None)):
        bar = chart.locator(f'path[aria-roledescription="bar"][aria-label*="team: {label};"]').first
        bar.click()
        expected = _worst(out, "team", team, 10)
        page.wait_for_function(
            f"([id, name]) => ({_SHOWN_JOBS})([id, name])[0] == {json.dumps(expected[0])}",
            arg=list(shown),
        )
        assert page.evaluate(_SHOWN_JOBS, shown) == expected
        assert chart.get_by_text(f"Worst jobs of {label}", exact=True).is_visible()
    assert HOSTILE_JOB in expected
    page.screenshot(path=tmp_path / "team.png", full_page=True)
    print(f"screenshot: {tmp_path / 'team.png'}")
    bar.dblclick()
    page.wait_for_function(
        f"([id, name]) => ({_SHOWN_JOBS})([id, name]).length == 10", arg=list(shown)
    )
    assert page.evaluate(_SHOWN_JOBS, shown) == _worst(out, None, None, 10)


def test_the_comparison_renders_in_chromium(out: Path, browser: Browser, tmp_path: Path) -> None:
    """`--compare` adds four charts (waterfall, slices, ledger moves, dollars lost), drawn like
    the rest."""
    periods = ("2026-11-20", "2026-11-21..2026-11-22")
    report = _write_report(out, "compared.html", "--compare", *periods)
    chart_ids = list(specs_of(report.read_text(encoding="utf-8")))
    assert chart_ids[18:] == [
        "compare-waterfall", "compare-slices", "compare-ledger", "compare-dollars"
    ]  # fmt: skip
    page = _render(browser, report, tmp_path / "compared.png")
    # The waterfall's steps on its axis: base MPG, the five parts (coverage the last), current MPG.
    labels = ["base MPG", "mix", "SG", "RG", "PG", "PG coverage", "current MPG"]
    shown = page.locator("#compare-waterfall").get_by_text
    assert [shown(text, exact=True).count() for text in labels] == [1] * len(labels)
    # and the dollars' steps: volume first, then the same parts
    labels = ["base $ lost", "volume", "mix", "scheduling", "runtime", "program", "unprofiled",
              "current $ lost"]  # fmt: skip
    shown = page.locator("#compare-dollars").get_by_text
    assert [shown(text, exact=True).count() for text in labels] == [1] * len(labels)


def test_the_content_security_policy_stops_a_script_that_got_in(
    report: Path, browser: Browser, tmp_path: Path
) -> None:
    """The second fence: were a script written into the page, the browser would refuse to run it
    (and the charts still render)."""
    tampered = tmp_path / "tampered.html"
    page_text = report.read_text(encoding="utf-8")
    head, body_end, tail = page_text.rpartition("</body>")
    tampered.write_text(f"{head}<script>alert(3)</script>{body_end}{tail}", encoding="utf-8")
    events: list[str] = []
    _open(_new_page(browser), tampered, events)
    assert not [e for e in events if e.startswith("dialog")]
    assert events[0] == f"request: {tampered.as_uri()}"
    assert len(events) == 2 and "Content Security Policy" in events[1], events
