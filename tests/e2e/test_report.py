"""`mpg report`: the charts' numbers against the published tables, recomputed here in plain
Python from the job-day and ledger rows; the hostile job's strings kept out of the markup; the
period; the comparison. (The page's other sections: tests/e2e/test_report_sections.py; the page in a
real browser: tests/e2e/test_report_browser.py.)"""

from __future__ import annotations

import datetime as dt
import html
import itertools
import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from mpg.compare import Comparison, Sums, compare_periods, decompose, parse_period
from mpg.compare.comparison import CategoryMove
from mpg.compare.decompose import FLEET_PART_NAMES, PART_NAMES, PeriodSums
from mpg.definitions.metrics import LEDGER_CATEGORIES
from mpg.report.command import ReportFileError, write_report
from mpg.report.compare_charts import comparison_section
from mpg.report.page import render_page
from mpg.report.theme import LEDGER_COLORS, LOSSES
from tests.support.cli import run_mpg
from tests.support.report_fleet import (
    HOSTILE_FRAMEWORK,
    HOSTILE_JOB,
    HOSTILE_LOST_CHIP_H,
    HOSTILE_OWNER,
    HOSTILE_TRACES,
    published_rows,
    rows_with,
    specs_of,
)

DAYS = ["2026-11-20", "2026-11-21", "2026-11-22"]
BASE, CURRENT = "2026-11-20", "2026-11-21..2026-11-22"


@pytest.fixture(scope="module")
def out(hostile_out: Path) -> Path:
    return hostile_out


@pytest.fixture(scope="module")
def page(out: Path) -> str:
    done = run_mpg("report", "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"report: {out / 'report.html'} (")
    return (out / "report.html").read_text(encoding="utf-8")


_rows = published_rows


def _ratios(rows: list[dict]) -> dict[str, float]:
    """The spec's slice ratios: ratios of sums, PG over the job-days that have one."""
    wanted = sum(r["wanted_chip_s"] for r in rows)
    allocated = sum(r["all_allocated_chip_s"] for r in rows)
    productive = sum(r["productive_chip_s"] for r in rows)
    profiled = [r for r in rows if r["pg"] is not None]
    pg = sum(r["ideal_chip_s"] for r in profiled) / sum(r["productive_chip_s"] for r in profiled)
    sg, rg = allocated / wanted, productive / allocated
    return {"sg": sg, "rg": rg, "pg": pg, "mpg": sg * rg * pg}


def _by_day(rows: list[dict]) -> dict[str, list[dict]]:
    days = defaultdict(list)
    for row in rows:
        days[row["day"].isoformat()].append(row)
    return days


def _fleet_rows(specs: dict) -> list[dict]:
    return rows_with(specs["fleet"], "metric", "value")


def test_fleet_goodput_per_day_is_the_ratio_of_the_job_days_sums(out: Path, page: str) -> None:
    job_days = _by_day(_rows(out, "job_day_goodput_current"))
    expected = {
        (day, metric): value
        for day, rows in job_days.items()
        for metric, value in _ratios(rows).items()
    }
    plotted = {(v["day"], v["metric"]): v["value"] for v in _fleet_rows(specs_of(page))}
    assert sorted(plotted) == sorted(expected)
    assert sorted({day for day, _ in plotted}) == DAYS
    for key, value in expected.items():
        assert plotted[key] == pytest.approx(value, rel=1e-12), key


def test_sg_by_size_class(out: Path, page: str) -> None:
    def size_class(chips: int) -> str:
        bounds = [(1, "1"), (8, "2-8"), (64, "9-64"), (512, "65-512")]
        return next((name for top, name in bounds if chips <= top), "513+")

    groups = defaultdict(list)
    for row in _rows(out, "job_day_goodput_current"):
        groups[row["day"].isoformat(), size_class(row["chips_requested"])].append(row)
    plotted = {(v["day"], v["size_class"]): v for v in rows_with(specs_of(page)["by-size"], "jobs")}
    assert sorted(plotted) == sorted(groups)
    for key, rows in groups.items():
        assert plotted[key]["value"] == pytest.approx(_ratios(rows)["sg"], rel=1e-12), key
        assert plotted[key]["jobs"] == len(rows)
    # The hostile job (1024 chips) is the 513+ class's on 2026-11-21, with the one 2048-chip job.
    hostile = next(r for r in groups["2026-11-21", "513+"] if r["job_id"] == HOSTILE_JOB)
    assert (hostile["wanted_chip_s"], hostile["all_allocated_chip_s"]) == (
        12 * 3600 * 1024,
        6 * 3600 * 1024,
    )


def test_ledger_area_and_waterfall_add_up(out: Path, page: str) -> None:
    ledger = _rows(out, "chip_time_ledger_current")
    per_day = defaultdict(float)
    per_category = defaultdict(float)
    for row in ledger:
        per_day[row["day"].isoformat(), row["category"]] += row["chip_s"] / 3600
        per_category[row["category"]] += row["chip_s"] / 3600
    specs = specs_of(page)
    area = {(v["day"], v["category"]): v["chip_h"] for v in rows_with(specs["ledger"], "day")}
    assert area == pytest.approx({k: v for k, v in per_day.items() if v > 0}, rel=1e-12)

    bars = rows_with(specs["waterfall"], "bar_start")
    losses = [c for c in reversed(LEDGER_CATEGORIES) if c != "ideal"]
    assert [b["category"] for b in bars] == ["wanted", *losses, "ideal"]
    wanted = sum(per_category.values())
    assert (bars[0]["bar_start"], bars[0]["bar_end"]) == (pytest.approx(wanted, rel=1e-12), 0)
    top = wanted
    for bar in bars[1:-1]:
        loss = per_category.get(bar["category"], 0.0)
        assert bar["bar_start"] == pytest.approx(top, rel=1e-12)
        assert bar["bar_start"] - bar["bar_end"] == pytest.approx(loss, abs=1e-6)
        top -= loss
    assert top == pytest.approx(per_category["ideal"], rel=1e-9)
    assert bars[-1]["bar_start"] == pytest.approx(per_category["ideal"], rel=1e-12)
    assert bars[-1]["bar_end"] == 0
    # Every bar carries its chip-hours and share of wanted as its label.
    for bar in bars:
        share = bar["chip_h"] / wanted
        assert bar["share"] == pytest.approx(share, rel=1e-12)
        assert bar["label"] == [f"{bar['chip_h']:,.1f}", f"{bar['share']:.1%}"]
    # The non-productive categories again, on their own scale: the same figures.
    losses = rows_with(specs["losses"], "bar_start")
    productive = {"wanted", "productive_unprofiled", "program_loss", "ideal"}
    assert losses == [b for b in bars if b["category"] not in productive]


def _category_scales(node: object) -> list[dict]:
    """The colour scales of every `color` channel that encodes `category` in a spec."""
    found = []
    if isinstance(node, dict):
        color = node.get("encoding", {}).get("color", {}) if "encoding" in node else {}
        if color.get("field") == "category":
            found.append(color["scale"])
        for value in node.values():
            found += _category_scales(value)
    elif isinstance(node, list):
        for value in node:
            found += _category_scales(value)
    return found


def test_each_ledger_category_has_one_colour_on_the_whole_page(page: str) -> None:
    """The area, the waterfall, the losses, each slice's bars and the worst jobs colour a
    category alike: one scale, every category in it, whichever of them a chart holds."""
    specs = specs_of(page)
    scales = {chart: _category_scales(spec) for chart, spec in specs.items()}
    expected = {"domain": list(LEDGER_COLORS), "range": list(LEDGER_COLORS.values())}
    drawn = [c for c, found in scales.items() if found]
    assert set(drawn) >= {
        "ledger",
        "waterfall",
        "losses",
        "by-chip-generation",
        "by-workload-class",
        "by-framework",
        "worst-jobs",
    }
    for chart in drawn:
        assert all(scale == expected for scale in scales[chart]), chart
    assert len(set(LEDGER_COLORS.values())) == len(LEDGER_COLORS)


def _lost_by_job(out: Path) -> dict[str, dict[str, float]]:
    """Per job, the chip-hours of each category of LOSSES (every one but ideal) over the whole
    period (the ledger)."""
    lost: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(LOSSES, 0.0))
    for row in _rows(out, "chip_time_ledger_current"):
        if row["category"] in LOSSES:
            lost[row["job_id"]][row["category"]] += row["chip_s"] / 3600
    return lost


def _usd_lost_by_job(out: Path) -> dict[str, float | None]:
    """Per job, the dollars of every category but ideal (chip_time_cost), None where its
    generation has no price."""
    usd: dict[str, float | None] = {}
    for row in _rows(out, "chip_time_cost_current"):
        if row["usd"] is None:
            usd.setdefault(row["job_id"], None)
        elif row["category"] != "ideal":
            usd[row["job_id"]] = (usd.get(row["job_id"]) or 0.0) + row["usd"]
        else:
            usd.setdefault(row["job_id"], 0.0)
    return usd


def _ranked(out: Path, jobs: set[str] | None = None) -> list[str]:
    """The jobs by dollars lost, most first, those without a price after the priced ones by
    chip-hours lost (an independent route to the ranking the page draws)."""
    lost, usd = _lost_by_job(out), _usd_lost_by_job(out)
    chosen = [j for j in lost if jobs is None or j in jobs]
    return sorted(
        chosen,
        key=lambda j: (usd[j] is None, -(usd[j] or 0.0), -sum(lost[j].values()), j),
    )


def test_worst_jobs_rank_by_dollars_lost_split_by_cause(out: Path, page: str) -> None:
    """Lost is every ledger category but ideal, program loss and unprofiled time included; jobs
    rank by dollars lost, those of a generation without a price (the hostile job's tpu-v5p)
    after every priced one; each bar's parts are the job's ledger rows."""
    lost = _lost_by_job(out)
    usd = _usd_lost_by_job(out)
    rows = rows_with(specs_of(page)["worst-jobs"], "rank")
    plotted = sorted((v for v in rows if v["rank"] <= 15), key=lambda v: v["rank"])
    assert [v["job_id"] for v in plotted] == _ranked(out)[:15]
    for v in plotted:
        assert v["lost_chip_h"] == pytest.approx(sum(lost[v["job_id"]].values()), rel=1e-12)
        assert {c: v[c] for c in LOSSES} == pytest.approx(lost[v["job_id"]], rel=1e-12, abs=1e-9)
        price = usd[v["job_id"]]
        assert v["lost_label"] == ("no price" if price is None else f"${price:,.2f}")
    # train-00018's program loss (29 383 chip-hours) on the priced gpu-h100 puts it first.
    assert plotted[0]["job_id"] == "train-00018"
    assert plotted[0]["program_loss"] > 29_000
    assert plotted[0]["owner"] == "eli"  # as its JOB_SUBMIT says
    # The hostile job's 12 288 chip-hours are unpriced (tpu-v5p): ranked after the priced jobs,
    # first of its generation's.
    (hostile,) = [v for v in rows if v["job_id"] == HOSTILE_JOB]
    assert hostile["rank"] == _ranked(out).index(HOSTILE_JOB) + 1
    assert all(usd[j] is not None for j in _ranked(out)[: hostile["rank"] - 1])
    assert (hostile["chip_generation_rank"], hostile["owner"]) == (1, HOSTILE_OWNER)
    assert hostile["lost_chip_h"] == HOSTILE_LOST_CHIP_H
    assert (hostile["scheduling"], hostile["runtime_idle"]) == (6 * 1024, 6 * 1024)


@pytest.mark.parametrize("kind", ["chip_generation", "workload_class", "framework"])
def test_each_slice_leads_to_its_worst_jobs(out: Path, page: str, kind: str) -> None:
    """Each slice chart carries, for every value of its column, that value's 10 worst jobs by
    the one ranking, with their rank within it (the picked slice's panel shows ranks 1-10):
    recomputed here. The panel is filtered by the chart's selection."""
    slice_of = {r["job_id"]: r[kind] for r in _rows(out, "job_day_goodput_current")}
    spec = specs_of(page)[f"by-{kind.replace('_', '-')}"]
    rows = rows_with(spec, "rank")
    for value in set(slice_of.values()):
        expected = _ranked(out, {j for j, v in slice_of.items() if v == value})[:10]
        mine = sorted((v for v in rows if v[kind] == value), key=lambda v: v[f"{kind}_rank"])
        assert [v["job_id"] for v in mine[:10]] == expected, value
        assert [v[f"{kind}_rank"] for v in mine[:10]] == list(range(1, len(expected) + 1))
    assert [p["name"] for p in spec["params"]] == [f"pick_{kind}"]
    assert json.dumps({"filter": {"param": f"pick_{kind}"}}) in json.dumps(spec)


@pytest.mark.parametrize("kind", ["chip_generation", "workload_class", "framework"])
def test_each_slice_shows_its_chip_hours_by_category(out: Path, page: str, kind: str) -> None:
    job_days = {(r["day"], r["job_id"]): r for r in _rows(out, "job_day_goodput_current")}
    expected: dict[tuple[str, str], float] = defaultdict(float)
    for row in _rows(out, "chip_time_ledger_current"):
        value = job_days[row["day"], row["job_id"]][kind]
        expected[value, row["category"]] += row["chip_s"] / 3600
    rows = rows_with(specs_of(page)[f"by-{kind.replace('_', '-')}"], "slice_label")
    plotted = {(v["slice"], v["category"]): v["chip_h"] for v in rows}
    assert plotted == pytest.approx({k: v for k, v in expected.items() if v > 0}, rel=1e-12)
    wanted: dict[str, float] = defaultdict(float)
    for row in job_days.values():
        wanted[row[kind]] += row["wanted_chip_s"] / 3600
    for v in rows:
        assert v["slice_chip_h"] == pytest.approx(wanted[v["slice"]], rel=1e-12)
        assert v["slice_label"] == f"{v['slice']} ({round(v['slice_chip_h']):,} chip-h)"


def test_strings_from_the_logs_stay_out_of_the_markup(page: str) -> None:
    """The hostile id, owner, framework (quoted by a quarantine reason) and traces folder appear
    only escaped, as JSON inside the specs block or as HTML text: no `<` of theirs reaches the
    markup, and the page's only `</script` are its own three closing tags."""
    for text in (HOSTILE_JOB, HOSTILE_OWNER, HOSTILE_FRAMEWORK, HOSTILE_TRACES):
        assert text not in page
    assert html.escape(HOSTILE_TRACES, quote=False) in page
    assert "unknown framework: \\u003cscript\\u003ealert(5)" in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page
    assert page.lower().count("</script") == 3
    assert "\\u003cimg src=x onerror=alert(2)\\u003e" in page


def test_the_period_limits_every_chart(out: Path, tmp_path: Path) -> None:
    target = tmp_path / "one-day.html"
    done = run_mpg(
        "report", "--out", out, "--from", "2026-11-21", "--to", "2026-11-21", "--file", target
    )
    assert done.returncode == 0, done.stderr
    page = target.read_text(encoding="utf-8")
    assert "<title>Fleet goodput, 2026-11-21 to 2026-11-21</title>" in page
    specs = specs_of(page)
    for chart, field in [
        ("fleet", "metric"),
        ("by-chip-generation", "metric"),
        ("by-size", "jobs"),
        ("ledger", "category"),
    ]:
        assert {v["day"] for v in rows_with(specs[chart], "day", field)} == {"2026-11-21"}, chart
    day = [r for r in _rows(out, "job_day_goodput_current") if r["day"] == dt.date(2026, 11, 21)]
    fleet = {v["metric"]: v["value"] for v in _fleet_rows(specs)}
    assert fleet == pytest.approx(_ratios(day), rel=1e-12)


def _opening(page: str) -> str:
    start = page.index('<p class="opening">') + len('<p class="opening">')
    return page[start : page.index("</p>", start)]


def test_the_opening_line_names_the_metric_version_and_the_periods_goodput(
    out: Path, page: str
) -> None:
    rows = _rows(out, "job_day_goodput_current")
    r = _ratios(rows)
    profiled = sum(x["productive_chip_s"] for x in rows if x["pg"] is not None)
    coverage = profiled / sum(x["productive_chip_s"] for x in rows)
    hours = sum(x["wanted_chip_s"] for x in rows) / 3600
    jobs = len({x["job_id"] for x in rows})
    assert _opening(page) == (
        f"Metric version v1. From 2026-11-20 to 2026-11-22, {jobs:,} jobs wanted {hours:,.1f} "
        f"chip-hours: fleet MPG {r['mpg']:.2%} = SG {r['sg']:.2%} x RG {r['rg']:.2%} x "
        f"PG {r['pg']:.2%} (PG from the {coverage:.1%} of productive chip-time that was profiled)."
    )


def test_the_report_shows_the_metric_version_asked_for(out: Path, tmp_path: Path) -> None:
    """After a backfill of v2 beside v1, `--metric-version v2` plots v2's job-days (whose PG
    differs), and says so; the current version (v1) stays the default."""
    copy = tmp_path / "out"
    shutil.copytree(out, copy, symlinks=True)  # .mpg/current is a link
    done = run_mpg(
        "backfill", "--out", copy, "--metric-version", "v2", "--from", DAYS[0], "--to", DAYS[-1]
    )
    assert done.returncode == 0, done.stderr
    target = tmp_path / "v2.html"
    done = run_mpg("report", "--out", copy, "--metric-version", "v2", "--file", target)
    assert done.returncode == 0, done.stderr
    page = target.read_text(encoding="utf-8")
    assert _opening(page).startswith("Metric version v2. ")
    v2 = [r for r in _rows(copy, "job_day_goodput") if r["metric_version"] == "v2"]
    plotted = {(v["day"], v["metric"]): v["value"] for v in _fleet_rows(specs_of(page))}
    for day, rows in _by_day(v2).items():
        for metric, value in _ratios(rows).items():
            assert plotted[day, metric] == pytest.approx(value, rel=1e-12), (day, metric)
    v1 = _by_day(_rows(copy, "job_day_goodput_current"))
    assert all(plotted[day, "pg"] != _ratios(rows)["pg"] for day, rows in v1.items())


@pytest.fixture(scope="module")
def compared(out: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The specs of the report with `--compare BASE CURRENT`."""
    target = tmp_path_factory.mktemp("compared") / "report.html"
    done = run_mpg("report", "--out", out, "--file", target, "--compare", BASE, CURRENT)
    assert done.returncode == 0, done.stderr
    return specs_of(target.read_text(encoding="utf-8"))


def test_the_comparison_charts_carry_compare_periods_parts(out: Path, compared: dict) -> None:
    """The waterfall and the slices' bars are `compare_periods`' figures, exactly; the two fleet
    MPGs are also the published job-days' ratios of sums, recomputed here."""
    comparison = compare_periods(out, parse_period(BASE), parse_period(CURRENT))
    d = comparison.decomposition
    steps = compared["compare-waterfall"]["data"]["values"]
    assert [(v["step"], v["value"]) for v in steps] == [
        ("base", d.base_mpg),
        *((name, getattr(d.totals, name)) for name in FLEET_PART_NAMES),
        ("current", d.current_mpg),
    ]
    # ... which are what `mpg compare --json` prints for the same periods.
    done = run_mpg("compare", "--out", out, "--base", BASE, "--current", CURRENT, "--json")
    printed = json.loads(done.stdout)
    assert [v["value"] for v in steps] == [
        printed["base"]["mpg"],
        *(printed["parts"][name] for name in FLEET_PART_NAMES),
        printed["current"]["mpg"],
    ]
    job_days = _by_day(_rows(out, "job_day_goodput_current"))
    assert d.base_mpg == pytest.approx(_ratios(job_days[DAYS[0]])["mpg"], rel=1e-12)
    current_rows = job_days[DAYS[1]] + job_days[DAYS[2]]
    assert d.current_mpg == pytest.approx(_ratios(current_rows)["mpg"], rel=1e-12)
    # Each part's bar starts where the last one ended, and the last ends at current MPG.
    assert [(v["bar_start"], v["bar_end"]) for v in steps[:2]] == [
        (0, d.base_mpg),
        (d.base_mpg, d.base_mpg + d.totals.mix),
    ]
    for before, after in itertools.pairwise(steps[1:-1]):
        assert after["bar_start"] == before["bar_end"]
    assert steps[-2]["bar_end"] == pytest.approx(d.current_mpg, abs=1e-12)

    slices = compared["compare-slices"]["data"]["values"]
    assert len(comparison.top_slices) == 5
    assert [(v["slice"], v["value"]) for v in slices] == [
        (" / ".join(c.slice), getattr(c.parts, name))
        for c in comparison.top_slices
        for name in PART_NAMES
    ]


def test_the_comparison_shows_the_ledger_categories_that_moved(out: Path, compared: dict) -> None:
    """For the fleet and then each top slice, as the terminal prints them, each moved category's
    share of wanted chip-time per period; the fleet's also against the ledger rows."""
    comparison = compare_periods(out, parse_period(BASE), parse_period(CURRENT))
    plotted = compared["compare-ledger"]["data"]["values"]
    scopes = [("fleet", comparison.fleet_moves)] + [
        (" / ".join(c.slice), comparison.slice_moves[c.slice]) for c in comparison.top_slices
    ]
    assert [(v["scope"].split(" (")[0], v["category"], v["share"]) for v in plotted] == [
        (scope, m.category, share)
        for scope, moves in scopes
        for m in moves
        for share in (m.base_share, m.current_share)
    ]
    assert len(comparison.fleet_moves) == 3
    assert len(plotted) == 2 * sum(len(moves) for _, moves in scopes) > 6
    # A slice without job-days in one period says which, as the terminal does.
    absent = [c for c in comparison.top_slices if not c.base.wanted]
    assert absent
    for c in absent:
        label = f"{' / '.join(c.slice)} (no job-days in the base period)"
        assert any(v["scope"] == label for v in plotted)
    chip_s = defaultdict(float)
    for row in _rows(out, "chip_time_ledger_current"):
        period = "base" if row["day"].isoformat() == DAYS[0] else "current"
        chip_s[period, row["category"]] += row["chip_s"]
    wanted = {p: sum(v for (q, _), v in chip_s.items() if q == p) for p in ("base", "current")}
    for v in (v for v in plotted if v["scope"] == "fleet"):
        period = v["period"].split()[0]
        expected = chip_s[period, v["category"]] / wanted[period]
        assert v["share"] == pytest.approx(expected, rel=1e-12), v


def test_a_hand_made_comparison_on_the_page() -> None:
    """One slice whose RG halves (productive 40 -> 20 of 80 allocated, PG 1/2 both times): MPG
    0.8 x 0.5 x 0.5 = 0.2 -> 0.8 x 0.25 x 0.5 = 0.1, all of it RG. Its name is markup, which
    reaches the page only escaped and comes back whole from the specs."""
    name = ("</script><script>alert(4)</script>", "jax", "<b>tpu</b>")
    before = Sums(100, 80, 40, 20, 40, sg=0.8, rg=0.5, pg=0.5, pg_coverage=1.0, mpg=0.2)
    after = Sums(100, 80, 20, 10, 20, sg=0.8, rg=0.25, pg=0.5, pg_coverage=1.0, mpg=0.1)
    d = decompose(PeriodSums(before, {name: before}), PeriodSums(after, {name: after}))
    comparison = Comparison(
        metric_version="v1",
        base_period=parse_period("2026-01-01"),
        current_period=parse_period("2026-01-02..2026-01-03"),
        decomposition=d,
        fleet_moves=(CategoryMove("runtime_idle", 0.1, 0.3, 0.2),),
        slice_moves={},
    )
    page = render_page("compare", [comparison_section(comparison)])
    assert name[0] not in page and name[2] not in page
    assert page.lower().count("</script") == 3
    specs = specs_of(page)
    steps = specs["compare-waterfall"]["data"]["values"]
    assert [v["step"] for v in steps] == ["base", *FLEET_PART_NAMES, "current"]
    assert [v["value"] for v in steps] == pytest.approx([0.2, 0, 0, -0.1, 0, 0, 0.1], abs=1e-15)
    bars = specs["compare-slices"]["data"]["values"]
    assert {v["slice"] for v in bars} == {" / ".join(name)}
    assert [v["value"] for v in bars] == pytest.approx([0, 0, -0.1, 0], abs=1e-15)
    moves = specs["compare-ledger"]["data"]["values"]
    assert [(v["scope"], v["period"], v["share"]) for v in moves] == [
        ("fleet", "base (2026-01-01..2026-01-01)", 0.1),
        ("fleet", "current (2026-01-02..2026-01-03)", 0.3),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "2027-01-01"], "mpg: error: no published goodput in "),
        (
            ["--from", "2026-11-22", "--to", "2026-11-20"],
            "mpg: error: --from 2026-11-22 is after --to 2026-11-20",
        ),
        (
            ["--compare", "2026-11-20..2026-11-21", "2026-11-21..2026-11-22"],
            "mpg: error: the periods 2026-11-20..2026-11-21 and 2026-11-21..2026-11-22 overlap",
        ),
        (["--compare", "2026-11-20", "yesterday"], "mpg: error: not a range of days"),
        (["--metric-version", "v9"], "mpg: error: unknown metric version v9 (known: v1, v2)"),
    ],
)
def test_a_bad_period_is_a_user_error(out: Path, args: list[str], message: str) -> None:
    done = run_mpg("report", "--out", out, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_a_folder_without_tables_is_a_user_error(tmp_path: Path) -> None:
    done = run_mpg("report", "--out", tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        f"mpg: error: no published tables in {tmp_path}: run mpg run first\n",
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing/report.html", "--file {out}/missing/report.html: the folder {out}/missing does "),
        (".", "--file {out} is a folder: name the HTML file to write, e.g. {out}/report.html"),
    ],
)
def test_a_file_that_cannot_be_written_is_refused_before_rendering(
    out: Path, target: str, message: str
) -> None:
    """Found after rendering, such a --file cost seconds and left a partial file behind."""
    before = sorted(p.name for p in out.iterdir())
    done = run_mpg("report", "--out", out, "--file", out / target)
    assert (done.returncode, done.stdout) == (2, "")
    expected = "mpg: error: " + message.format(out=out)
    assert done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_write_that_fails_is_one_line_and_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    (tmp_path / ".report.html.partial").mkdir()  # so that writing the partial file fails
    with pytest.raises(ReportFileError, match=f"cannot write {target}: Is a directory"):
        write_report(target, "<html></html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".report.html.partial"]
    (tmp_path / ".report.html.partial").rmdir()
    write_report(target, "<html></html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
