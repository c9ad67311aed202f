"""One number, one definition (issue 19): for one published fleet, every surface gives the same
dollars lost, chip-hours and ratios for the same period and slice, to the cent; each
reconciliation adds up; and a definition changed in its one file changes every surface.

The fleet is tests/support/report_fleet.py's (the committed sample and its hostile and ranked
jobs, over 2026-11-20 .. 2026-11-22): the cost catalog prices gpu-h100 and tpu-v4 only, so it
is a priced fleet with unpriced generations (the hostile job's tpu-v5p among them). The surfaces:
`mpg report --json`, `mpg compare --json`, `mpg explain --json`, the views (cost_by_slice,
worst_jobs, slice_scorecard) and `mpg run`'s closing summary. The independent route is plain
Python over the published chip_time_cost and job_day_goodput rows.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

import mpg.sql.files
from mpg.sql.files import create_macros
from tests.support.cli import run_mpg
from tests.support.report_fleet import HOSTILE_JOB, HOSTILE_TRACES

FIRST, LAST = "2026-11-20", "2026-11-22"
BASE, CURRENT = "2026-11-20", "2026-11-21..2026-11-22"
PARTS = ("scheduling", "runtime", "program", "unprofiled")
RUNTIME = (
    "runtime_idle", "lost_progress", "checkpoint_save", "checkpoint_restore", "compile", "init",
    "data_wait",
)  # fmt: skip
PART_OF = {"scheduling": "scheduling", "program_loss": "program", "productive_unprofiled":
           "unprofiled", **dict.fromkeys(RUNTIME, "runtime")}  # fmt: skip
PRICED, UNPRICED = "gpu-h100", "tpu-v5p"
PRICED_JOB = "train-00018"  # gpu-h100, the worst job by dollars


@pytest.fixture(scope="module")
def out(hostile_out: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's hostile fleet, its traces beside it (their times too): the tests
    here run `mpg run` into it, which the other report tests' folder must not see."""
    root = tmp_path_factory.mktemp("one-number")
    shutil.copytree(hostile_out.parent / HOSTILE_TRACES, root / HOSTILE_TRACES)
    return shutil.copytree(hostile_out, root / "out", symlinks=True)


def cents(value: float | None) -> int | None:
    return None if value is None else round(value * 100)


def _rows(out: Path, query: str) -> list[dict]:
    """Rows of a query on the published file, read as a reader reads it (the layer's macros
    from this code, mpg.output.published)."""
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        create_macros(con)
        return con.sql(query).to_arrow_table().to_pylist()


class ByHand:
    """The independent route: plain Python over the published rows."""

    def __init__(self, out: Path, lost_categories: Callable[[str], bool] | None = None) -> None:
        lost_of = lost_categories or (lambda c: c != "ideal")
        self.job_days = _rows(out, "from job_day_goodput_current")
        slices = {(r["day"], r["job_id"]): r for r in self.job_days}
        self.lost_usd: dict[tuple, float] = defaultdict(float)
        self.lost_chip_s: dict[tuple, float] = defaultdict(float)
        self.parts: dict[tuple, float] = defaultdict(float)
        self.priced: set[tuple] = set()
        for r in _rows(out, "from chip_time_cost_current"):
            job = slices[(r["day"], r["job_id"])]
            for key in self._keys(job):
                if lost_of(r["category"]):
                    self.lost_chip_s[key] += r["chip_s"]
                if r["usd"] is not None:
                    self.priced.add(key)
                    if lost_of(r["category"]):
                        self.lost_usd[key] += r["usd"]
                        self.parts[(*key, PART_OF[r["category"]])] += r["usd"]

    @staticmethod
    def _keys(job: dict) -> list[tuple]:
        return [("fleet",), ("chip_generation", job["chip_generation"]), ("job", job["job_id"]),
                ("day", job["day"].isoformat())]  # fmt: skip

    def usd(self, *key: str) -> float | None:
        return self.lost_usd[key] if key in self.priced else None

    def unpriced_chip_s(self) -> float:
        """Wanted chip-seconds of the jobs whose generation has no price."""
        priced_jobs = {key[1] for key in self.priced if key[0] == "job"}
        return sum(r["wanted_chip_s"] for r in self.job_days if r["job_id"] not in priced_jobs)


@pytest.fixture(scope="module")
def by_hand(out: Path) -> ByHand:
    return ByHand(out)


@pytest.fixture(scope="module")
def report(out: Path) -> dict:
    done = run_mpg("report", "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def compared(out: Path) -> dict:
    done = run_mpg("compare", "--out", out, "--base", BASE, "--current", CURRENT, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _explain(out: Path, job: str) -> dict:
    done = run_mpg("explain", "--out", out, "--job", job, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def summary(out: Path) -> str:
    """`mpg run`'s closing summary: a run over the same traces, with nothing new to publish,
    prints the published snapshot's (the last 7 days published: here all 3)."""
    done = run_mpg("run", "--traces", out.parent / HOSTILE_TRACES, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "up to date" in done.stdout
    return done.stdout


_DOLLARS = r"\$([\d,]+\.\d\d)"


def _usd(text: str) -> int:
    """Cents from `$1,234.56`."""
    return round(float(text.replace(",", "")) * 100)


def _summary_lost(summary: str) -> tuple[int, dict[str, int], float]:
    """The fleet's dollars lost, their parts and the unpriced chip-hours, as the summary prints."""
    found = re.search(
        rf"  {_DOLLARS} lost = scheduling {_DOLLARS} \+ runtime {_DOLLARS} \+ program {_DOLLARS} "
        rf"\+ unprofiled {_DOLLARS}; ([\d,.]+) unpriced chip-hours not in it",
        summary,
    )
    assert found, summary
    lost, *parts, unpriced = found.groups()
    return (
        _usd(lost),
        dict(zip(PARTS, map(_usd, parts), strict=True)),
        float(unpriced.replace(",", "")),
    )


def _summary_row(summary: str, title: str, value: str) -> list[str]:
    """A slice's row of the summary's scorecard table `title`."""
    table = summary.split(f"\n{title}, worst first")[1].split("\n\n")[0]
    (row,) = [line for line in table.splitlines() if line.split()[0] == value]
    return row.split()


def test_fleet_dollars_lost_are_one_number_on_every_surface(
    out: Path, by_hand: ByHand, report: dict, compared: dict, summary: str
) -> None:
    expected = cents(by_hand.usd("fleet"))
    parts = {p: cents(by_hand.parts[("fleet", p)]) for p in PARTS}
    headline = report["headline"]
    (scorecard,) = [r for r in report["scorecard"] if r["slice_kind"] == "fleet"]
    views = _rows(
        out,
        "select sum(lost_usd) as lost_usd from cost_by_slice where size_class is null and "
        "workload_class is null and framework is null and chip_generation is null",
    )
    (view_scorecard,) = _rows(out, "from slice_scorecard where slice_kind = 'fleet'")
    jobs = _rows(out, "select sum(lost_usd) as lost_usd from worst_jobs")
    dollars = compared["dollars"]
    summary_lost, summary_parts, summary_unpriced = _summary_lost(summary)
    assert {
        "report": cents(headline["lost_usd"]),
        "report scorecard": cents(scorecard["lost_usd"]),
        "compare (base + current)": cents(
            dollars["base"]["lost_usd"] + dollars["current"]["lost_usd"]
        ),
        "cost_by_slice (the days summed)": cents(views[0]["lost_usd"]),
        "slice_scorecard": cents(view_scorecard["lost_usd"]),
        "worst_jobs (the jobs summed)": cents(jobs[0]["lost_usd"]),
        "run summary": summary_lost,
    } == dict.fromkeys(
        ("report", "report scorecard", "compare (base + current)",
         "cost_by_slice (the days summed)", "slice_scorecard", "worst_jobs (the jobs summed)",
         "run summary"),
        expected,
    )  # fmt: skip
    # the reconciliation adds up, and its parts are the same everywhere
    assert {p: cents(headline[f"lost_{p}_usd"]) for p in PARTS} == parts == summary_parts
    assert sum(headline[f"lost_{p}_usd"] for p in PARTS) == pytest.approx(headline["lost_usd"])
    assert headline["reconciliation"].startswith(
        f"${headline['lost_usd']:,.2f} lost = scheduling ${headline['lost_scheduling_usd']:,.2f} "
    )
    categories = report["ledger_categories"]
    assert cents(sum(c["usd"] or 0 for c in categories if c["category"] != "ideal")) == expected
    # unpriced chip-hours are named beside it, the same on every surface
    unpriced = by_hand.unpriced_chip_s()
    assert headline["unpriced_chip_s"] == pytest.approx(unpriced, rel=1e-12)
    assert summary_unpriced == round(unpriced / 3600, 1)
    assert dollars["base"]["unpriced_chip_s"] + dollars["current"]["unpriced_chip_s"] == (
        pytest.approx(unpriced, rel=1e-12)
    )
    assert UNPRICED in {g["chip_generation"] for g in headline["unpriced_generations"]}


def test_a_slices_figures_are_one_number_on_every_surface(
    out: Path, by_hand: ByHand, report: dict, summary: str
) -> None:
    """A priced chip generation and an unpriced one: dollars lost (none for the unpriced, said),
    chip-hours lost and MPG alike in the report's scorecard, the views and the run summary."""
    for generation in (PRICED, UNPRICED):
        (card,) = [r for r in report["scorecard"] if r["slice"] == generation]
        where = (
            "where size_class is null and workload_class is null and framework is null and "
            f"chip_generation = '{generation}'"  # a name of this test's
        )
        (costs,) = _rows(out, f"select sum(lost_usd) as lost_usd from cost_by_slice {where}")
        (goodput,) = _rows(
            out,
            "select sum(wanted_chip_s - coalesce(ideal_chip_s, 0)) as lost_chip_s from "
            f"goodput_by_size_class {where}",
        )
        (view_card,) = _rows(out, f"from slice_scorecard where slice = '{generation}'")
        row = _summary_row(summary, "chip generation", generation)
        expected = cents(by_hand.usd("chip_generation", generation))
        assert cents(card["lost_usd"]) == cents(costs["lost_usd"]) == expected
        assert cents(view_card["lost_usd"]) == expected
        if expected is None:
            assert row[6:8] == ["no", "price"]
        else:
            assert row[6] == f"${expected / 100:,.2f}"
        lost_chip_s = by_hand.lost_chip_s[("chip_generation", generation)]
        assert card["lost_chip_s"] == pytest.approx(lost_chip_s, rel=1e-12)
        assert goodput["lost_chip_s"] == pytest.approx(lost_chip_s, rel=1e-9)
        assert view_card["mpg"] == card["mpg"]
        assert row[1] == f"{card['mpg']:.1%}"
    assert by_hand.usd("chip_generation", UNPRICED) is None


def test_period_ratios_agree_with_compare_and_the_summary(
    out: Path, report: dict, compared: dict, summary: str
) -> None:
    """Fleet MPG, SG, RG, PG and coverage: the report over the whole period is the run summary's
    and the scorecard view's; over the base period alone it is compare's base."""
    headline = report["headline"]
    (view_fleet,) = _rows(out, "from slice_scorecard where slice_kind = 'fleet'")
    ratios = ("mpg", "sg", "rg", "pg", "pg_coverage")
    assert [view_fleet[r] for r in ratios] == [headline[r] for r in ratios]
    shown = re.search(
        r"fleet MPG ([\d.]+)% = SG ([\d.]+)% x RG ([\d.]+)% x PG ([\d.]+)% \(PG coverage "
        r"([\d.]+)%\)",
        summary,
    )
    assert shown and list(shown.groups()) == [f"{headline[r] * 100:.1f}" for r in ratios]
    done = run_mpg("report", "--out", out, "--json", "--from", BASE, "--to", BASE)
    base = json.loads(done.stdout)["headline"]
    for r in ratios:
        assert compared["base"][r] == base[r], r
    assert compared["base"]["wanted_chip_s"] == base["wanted_chip_s"]
    assert cents(compared["dollars"]["base"]["lost_usd"]) == cents(base["lost_usd"])


def test_a_jobs_figures_are_one_number_on_every_surface(
    out: Path, by_hand: ByHand, report: dict
) -> None:
    """mpg explain's lifetime figures of a priced job and of an unpriced one (whose unprofiled
    chip-hours are in its loss) are the worst_jobs view's and the report's, to the cent, and its
    rank is theirs."""
    view = {r["job_id"]: r for r in _rows(out, "from worst_jobs")}
    listed = {r["job_id"]: r for r in report["worst_jobs"]}
    for job in (PRICED_JOB, HOSTILE_JOB):
        lost = _explain(out, job)["lost"]
        assert cents(lost["lost_usd"]) == cents(view[job]["lost_usd"])
        assert cents(lost["lost_usd"]) == cents(listed[job]["lost_usd"])
        assert cents(lost["lost_usd"]) == cents(by_hand.usd("job", job))
        for p in PARTS:
            assert cents(lost[f"lost_{p}_usd"]) == cents(view[job][f"lost_{p}_usd"]), p
        assert lost["lost_chip_s"] == pytest.approx(by_hand.lost_chip_s[("job", job)], rel=1e-12)
        assert lost["lost_chip_s"] == view[job]["lost_chip_s"] == listed[job]["lost_chip_s"]
        assert lost["rank"] == view[job]["rank"] == listed[job]["rank"]
    assert view[PRICED_JOB]["rank"] == 1 and view[HOSTILE_JOB]["lost_usd"] is None


def test_the_worst_jobs_are_the_independent_ranking(
    out: Path, by_hand: ByHand, report: dict
) -> None:
    """By dollars lost, the jobs of unpriced generations after every priced one by chip-hours
    lost; the report's list, its fix list and the view are that one order."""
    jobs = {r["job_id"] for r in by_hand.job_days}
    ranked = sorted(
        jobs,
        key=lambda j: (
            by_hand.usd("job", j) is None,
            -(by_hand.usd("job", j) or 0.0),
            -by_hand.lost_chip_s[("job", j)],
            j,
        ),
    )
    view = [r["job_id"] for r in _rows(out, "select job_id from worst_jobs order by rank")]
    assert view == ranked
    listed = sorted(report["worst_jobs"], key=lambda r: r["rank"])
    assert [r["job_id"] for r in listed] == [
        j for j in ranked if j in {r["job_id"] for r in listed}
    ]
    assert [r["job_id"] for r in listed if r["rank"] <= 15] == ranked[:15]
    fixes = report["fix_list"]
    assert [f["job_id"] for f in fixes] == ranked[: len(fixes)]
    assert all(f["action"] and f["advice"] for f in fixes)


def test_the_report_json_carries_every_section(report: dict) -> None:
    assert report["period"] == {"first": FIRST, "last": LAST}
    kinds = {r["slice_kind"] for r in report["scorecard"]}
    assert kinds == {"fleet", "chip_generation", "workload_class", "framework", "size_class",
                     "team", "queue", "owner"}  # fmt: skip
    for key in ("worst_jobs", "fix_list", "ledger_categories", "waterfall", "goodput_days",
                "teams", "queue_waiting"):  # fmt: skip
        assert report[key], key
    assert set(report["advice"]) == {
        "checkpoint_jobs", "checkpoint_slices", "step_outliers", "stragglers"
    }  # fmt: skip
    assert report["comparison"] is None


@pytest.fixture
def unprofiled_not_lost(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A newcomer's change of the definition of dollars lost, in its one file: productive time
    without a profile is no longer counted as lost (sql/semantic/job_days.sql's `loss_part`)."""
    original = mpg.sql.files.load_sql
    definition = "when 'productive_unprofiled' then 'unprofiled'"

    def changed(name: str) -> str:
        text = original(name)
        if name == "semantic/job_days.sql":
            assert definition in text
            return text.replace(definition, "when 'productive_unprofiled' then null")
        return text

    monkeypatch.setattr(mpg.sql.files, "load_sql", changed)
    yield


def test_a_definition_changed_in_its_one_file_changes_every_surface(
    out: Path, unprofiled_not_lost: None
) -> None:
    """Every surface reads dollars lost from the layer's one definition: changed there, the
    report, compare, explain, the views and the run summary all give the new figure."""
    by_hand = ByHand(out, lambda c: c not in ("ideal", "productive_unprofiled"))
    old = ByHand(out)
    expected = cents(by_hand.usd("fleet"))
    assert expected != cents(old.usd("fleet"))
    report = json.loads(run_mpg("report", "--out", out, "--json").stdout)
    compared = json.loads(
        run_mpg("compare", "--out", out, "--base", BASE, "--current", CURRENT, "--json").stdout
    )
    (view,) = _rows(out, "from slice_scorecard where slice_kind = 'fleet'")
    done = run_mpg("run", "--traces", out.parent / HOSTILE_TRACES, "--out", out)
    dollars = compared["dollars"]
    assert {
        "report": cents(report["headline"]["lost_usd"]),
        "compare": cents(dollars["base"]["lost_usd"] + dollars["current"]["lost_usd"]),
        "view": cents(view["lost_usd"]),
        "run summary": _summary_lost(done.stdout)[0],
    } == dict.fromkeys(("report", "compare", "view", "run summary"), expected)
    assert report["headline"]["lost_unprofiled_usd"] == 0
    job = _explain(out, PRICED_JOB)["lost"]
    assert cents(job["lost_usd"]) == cents(by_hand.usd("job", PRICED_JOB))
