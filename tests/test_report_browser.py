"""The report in a real headless Chromium (Debian's `chromium`, which `make test` installs), as a
reader opens it: from a file, with the network off. It loads without a console message or a page
error, draws every chart, shows the hostile job's id and owner as text and runs neither, and
leaves a screenshot (its path printed; `pytest -s` shows it).

A missing browser fails the test rather than skipping it: CI must not pass without it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.conftest import run_mpg
from tests.report_fleet import HOSTILE_JOB, HOSTILE_OWNER, published_hostile_fleet, specs_of


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


def test_the_report_renders_in_chromium(tmp_path: Path) -> None:
    out = published_hostile_fleet(tmp_path)
    report = tmp_path / "report.html"
    done = run_mpg("report", "--out", out, "--file", report)
    assert done.returncode == 0, done.stderr
    chart_ids = list(specs_of(report.read_text(encoding="utf-8")))
    assert len(chart_ids) == 8

    events: list[str] = []
    screenshot = tmp_path / "report.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium())
        try:
            context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
            page = context.new_page()
            _open(page, report, events)
            rendered = page.evaluate("document.body.dataset.rendered")
            charts = page.evaluate(
                """() => [...document.querySelectorAll("div.chart")].map((div) => {
                    const svgs = div.querySelectorAll("svg.marks");
                    const box = svgs.length && svgs[0].getBoundingClientRect();
                    return [div.id, svgs.length, box ? box.width : 0, box ? box.height : 0];
                })"""
            )
            hostile_id = page.get_by_text(HOSTILE_JOB, exact=True)
            hostile_owner = page.get_by_text(HOSTILE_OWNER, exact=True)
            visible = (hostile_id.count(), hostile_id.first.is_visible(), hostile_owner.count(),
                       hostile_owner.first.is_visible())  # fmt: skip
            scripts = page.evaluate("document.querySelectorAll('script').length")
            images = page.evaluate("document.querySelectorAll('img').length")
            page.screenshot(path=screenshot, full_page=True)
        finally:
            browser.close()
    print(f"screenshot: {screenshot}")

    assert events == [f"request: {report.as_uri()}"]
    assert rendered == str(len(chart_ids))
    assert [c[:2] for c in charts] == [[chart_id, 1] for chart_id in chart_ids]
    for chart_id, _, width, height in charts:
        assert width > 100 and height > 100, chart_id
    # The worst-jobs chart names the hostile job on its axis and its owner beside the bar.
    assert visible == (1, True, 1, True)
    assert (scripts, images) == (3, 0)
    assert screenshot.stat().st_size > 50_000
