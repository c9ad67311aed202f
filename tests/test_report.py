"""`mpg report`: the charts' numbers against the published tables, recomputed here in plain
Python from the job-day rows; the hostile job's strings kept out of the markup; the period.
(The page in a real browser: tests/test_report_browser.py.)"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from mpg.metrics import LEDGER_CATEGORIES
from tests.conftest import run_mpg
from tests.report_fleet import (
    HOSTILE_JOB,
    HOSTILE_LOST_CHIP_H,
    HOSTILE_OWNER,
    published_hostile_fleet,
    specs_of,
)

DAYS = ["2026-11-20", "2026-11-21", "2026-11-22"]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return published_hostile_fleet(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def page(out: Path) -> str:
    done = run_mpg("report", "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"report: {out / 'report.html'} (")
    return (out / "report.html").read_text(encoding="utf-8")


def _rows(out: Path, table: str) -> list[dict]:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        cursor = con.execute(f"select * from {table}")  # a fixed name from this file
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


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


def test_fleet_goodput_per_day_is_the_ratio_of_the_job_days_sums(out: Path, page: str) -> None:
    job_days = _by_day(_rows(out, "job_day_goodput_current"))
    expected = {
        (day, metric): value
        for day, rows in job_days.items()
        for metric, value in _ratios(rows).items()
    }
    plotted = {
        (v["day"], v["metric"]): v["value"] for v in specs_of(page)["fleet"]["data"]["values"]
    }
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
    plotted = {(v["day"], v["size_class"]): v for v in specs_of(page)["by-size"]["data"]["values"]}
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
    area = {(v["day"], v["category"]): v["chip_h"] for v in specs["ledger"]["data"]["values"]}
    assert area == pytest.approx({k: v for k, v in per_day.items() if v > 0}, rel=1e-12)

    bars = specs["waterfall"]["data"]["values"]
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


def test_worst_jobs_rank_lost_chip_hours_and_name_owners(out: Path, page: str) -> None:
    lost = defaultdict(float)
    for row in _rows(out, "job_day_goodput_current"):
        lost[row["job_id"]] += (row["wanted_chip_s"] - row["productive_chip_s"]) / 3600
    ranked = sorted(lost.items(), key=lambda item: (-item[1], item[0]))[:15]
    plotted = specs_of(page)["worst-jobs"]["data"]["values"]
    assert [(v["job_id"], v["lost_chip_h"]) for v in plotted] == [
        (job, pytest.approx(hours, rel=1e-12)) for job, hours in ranked
    ]
    assert (plotted[0]["job_id"], plotted[0]["owner"]) == (HOSTILE_JOB, HOSTILE_OWNER)
    assert plotted[0]["lost_chip_h"] == HOSTILE_LOST_CHIP_H
    assert plotted[1]["owner"] == "team-chat"  # train-00018, as its JOB_SUBMIT says


def test_strings_from_the_logs_stay_out_of_the_markup(page: str) -> None:
    """The hostile id and owner appear only JSON-escaped inside the specs block: no `<` of theirs
    reaches the HTML, and the page's only `</script` are its own three closing tags."""
    for text in (HOSTILE_JOB, HOSTILE_OWNER):
        assert text not in page
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
    for chart in ("fleet", "by-chip-generation", "by-size", "ledger"):
        assert {v["day"] for v in specs[chart]["data"]["values"]} == {"2026-11-21"}, chart
    day = [r for r in _rows(out, "job_day_goodput_current") if r["day"] == dt.date(2026, 11, 21)]
    fleet = {v["metric"]: v["value"] for v in specs["fleet"]["data"]["values"]}
    assert fleet == pytest.approx(_ratios(day), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "2027-01-01"], "mpg: error: no published goodput in "),
        (
            ["--from", "2026-11-22", "--to", "2026-11-20"],
            "mpg: error: --from 2026-11-22 is after --to 2026-11-20",
        ),
    ],
)
def test_an_empty_period_is_a_user_error(out: Path, args: list[str], message: str) -> None:
    done = run_mpg("report", "--out", out, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_a_folder_without_tables_is_a_user_error(tmp_path: Path) -> None:
    done = run_mpg("report", "--out", tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        f"mpg: error: no published tables in {tmp_path}: run mpg run first\n",
    )
