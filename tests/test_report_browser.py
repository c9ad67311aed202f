"""The report in a real headless Chromium (Debian's `chromium`, which `make test` installs), as a
reader opens it: from a file, with the network off. It loads without a console message or a page
error, draws every chart, shows the hostile job's id and owner as text and runs neither, and
leaves a screenshot (its path printed; `pytest -s` shows it).

A missing browser fails the test rather than skipping it: CI must not pass without it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

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


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return published_hostile_fleet(tmp_path_factory.mktemp("report-browser"))


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


def _new_page(browser: Browser) -> Page:
    context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
    return context.new_page()


def _render(browser: Browser, report: Path, screenshot: Path) -> Page:
    """Open the report and check it loads quietly and draws every chart as an SVG of real size."""
    chart_ids = list(specs_of(report.read_text(encoding="utf-8")))
    events: list[str] = []
    page = _new_page(browser)
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
    for chart_id, _, width, height in charts:
        assert width > 100 and height > 100, chart_id
    assert screenshot.stat().st_size > 50_000
    return page


def test_the_report_renders_in_chromium(report: Path, browser: Browser, tmp_path: Path) -> None:
    assert len(specs_of(report.read_text(encoding="utf-8"))) == 8
    page = _render(browser, report, tmp_path / "report.png")
    # The worst-jobs chart names the hostile job on its axis and its owner beside the bar, as
    # text; the page holds its own three scripts and no image.
    for text in (HOSTILE_JOB, HOSTILE_OWNER):
        shown = page.get_by_text(text, exact=True)
        assert (shown.count(), shown.first.is_visible()) == (1, True), text
    assert page.evaluate("document.querySelectorAll('script').length") == 3
    assert page.evaluate("document.querySelectorAll('img').length") == 0


def test_the_comparison_renders_in_chromium(out: Path, browser: Browser, tmp_path: Path) -> None:
    """`--compare` adds three charts (waterfall, slices, ledger moves), drawn like the rest."""
    periods = ("2026-11-20", "2026-11-21..2026-11-22")
    report = _write_report(out, "compared.html", "--compare", *periods)
    chart_ids = list(specs_of(report.read_text(encoding="utf-8")))
    assert chart_ids[8:] == ["compare-waterfall", "compare-slices", "compare-ledger"]
    page = _render(browser, report, tmp_path / "compared.png")
    # The waterfall's steps on its axis: base MPG, the five parts (coverage the last), current MPG.
    labels = ["base MPG", "mix", "SG", "RG", "PG", "PG coverage", "current MPG"]
    shown = page.locator("#compare-waterfall").get_by_text
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
