"""Teams, queues and chargeback (issue 21 section 3): a team's, a queue's and an owner's figures
add up to the fleet's, every day, to the cent, and equal an independent sum; so do the monthly
chargeback's and the queues' waiting; the report and `mpg compare` show the same figures.

The fleet is tests/support/report_fleet.py's (the committed sample, whose JOB_SUBMITs name a
team, a queue and an owner for most jobs and none for some, and the hostile and ranked jobs,
which name no team or queue), over 2026-11-20 .. 2026-11-22: gpu-h100 and tpu-v4 priced, the
rest not. The independent route is plain Python over the published job_day_goodput and
chip_time_cost rows.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from mpg.definitions.figures import NONE_NAMED
from tests.support.cli import run_mpg
from tests.support.report_fleet import published_rows

KINDS = ("team", "queue", "owner")
PARTS = {"scheduling": "scheduling", "program_loss": "program",
         "productive_unprofiled": "unprofiled"}  # fmt: skip
NOVEMBER = date(2026, 11, 1)


@pytest.fixture(scope="module")
def out(hostile_out: Path) -> Path:
    return hostile_out


def cents(value: float | None) -> int | None:
    return None if value is None else round(value * 100)


def _size_class(chips: int) -> str:
    for top, name in ((1, "1"), (8, "2-8"), (64, "9-64"), (512, "65-512")):
        if chips <= top:
            return name
    return "513+"


class Sums:
    """Sums over job-days, keyed as asked: chip-seconds wanted and held, dollars (None until a
    priced row comes), lost dollars and their parts, the ledger's chip-seconds by category."""

    def __init__(self) -> None:
        self.chip_s: dict[tuple, float] = defaultdict(float)
        self.usd: dict[tuple, float | None] = {}

    def add_chip_s(self, key: tuple, value: float) -> None:
        self.chip_s[key] += value

    def add_usd(self, key: tuple, value: float | None) -> None:
        if value is None:
            self.usd.setdefault(key, None)
        else:
            self.usd[key] = (self.usd.get(key) or 0.0) + value


@pytest.fixture(scope="module")
def by_hand(out: Path) -> dict[str, Any]:
    """Every job-day's attributes and its ledger's chip-seconds and dollars, from the published
    rows; then sums by (what, day or month, kind, value) as each test asks."""
    job_days = {(r["day"], r["job_id"]): r for r in published_rows(out, "job_day_goodput_current")}
    ledger = published_rows(out, "chip_time_cost_current")
    return {"job_days": job_days, "ledger": ledger}


def _sum_by(by_hand: dict[str, Any], keys: Any) -> Sums:
    """`keys(job_day)` gives the groups a job-day belongs to; each group sums wanted, held and
    lost chip-seconds, the ledger's categories, dollars wanted, used (not scheduling) and lost
    (not ideal) and lost's parts."""
    sums = Sums()
    for r in by_hand["job_days"].values():
        for key in keys(r):
            sums.add_chip_s((*key, "wanted"), r["wanted_chip_s"])
            sums.add_chip_s((*key, "used"), r["all_allocated_chip_s"])
    for row in by_hand["ledger"]:
        job_day = by_hand["job_days"][(row["day"], row["job_id"])]
        category = row["category"]
        for key in keys(job_day):
            sums.add_chip_s((*key, category), row["chip_s"])
            sums.add_usd((*key, "wanted"), row["usd"])
            if category != "scheduling":
                sums.add_usd((*key, "used"), row["usd"])
            if category != "ideal":
                sums.add_chip_s((*key, "lost"), row["chip_s"])
                sums.add_usd((*key, "lost"), row["usd"])
                sums.add_usd((*key, PARTS.get(category, "runtime")), row["usd"])
    return sums


def test_teams_queues_and_owners_add_up_to_the_fleet_every_day_to_the_cent(
    out: Path, by_hand: dict[str, Any]
) -> None:
    """rollup_by_day's team, queue and owner rows equal the independent sums, day by day (a NULL
    team a row of its own); each kind's rows add up to that day's fleet row."""
    sums = _sum_by(
        by_hand,
        lambda r: [(r["day"], "fleet", "fleet"), *((r["day"], k, r[k]) for k in KINDS)],
    )
    rows = published_rows(out, "rollup_by_day")
    fleet = {r["day"]: r for r in rows if r["slice_kind"] == "fleet"}
    days = sorted(fleet)
    assert days == [date(2026, 11, 20), date(2026, 11, 21), date(2026, 11, 22)]
    for kind in KINDS:
        mine = [r for r in rows if r["slice_kind"] == kind]
        expected = {(d, k, v) for (d, k, v, what) in sums.chip_s if k == kind and what == "wanted"}
        assert {(r["day"], kind, r["slice"]) for r in mine} == expected
        assert None in {r["slice"] for r in mine}, kind  # some jobs' inputs name none
        for r in mine:
            key = (r["day"], kind, r["slice"])
            assert r["wanted_chip_s"] == pytest.approx(sums.chip_s[(*key, "wanted")], rel=1e-12)
            assert r["lost_chip_s"] == pytest.approx(sums.chip_s[(*key, "lost")], rel=1e-12)
            assert cents(r["lost_usd"]) == cents(sums.usd.get((*key, "lost"))), key
            assert cents(r["wanted_usd"]) == cents(sums.usd.get((*key, "wanted"))), key
            for part in ("scheduling", "runtime", "program", "unprofiled"):
                # a part none of whose chip-time is priced is 0 where the rest of the row is
                by_part = sums.usd.get((*key, part))
                if by_part is None and r["lost_usd"] is not None:
                    by_part = 0.0
                assert cents(r[f"lost_{part}_usd"]) == cents(by_part), (key, part)
        for day in days:
            that_day = [r for r in mine if r["day"] == day]
            for column in ("lost_usd", "wanted_usd", "lost_scheduling_usd"):
                total = sum(r[column] or 0.0 for r in that_day)
                assert cents(total) == cents(fleet[day][column]), (kind, day, column)
            for column in ("wanted_chip_s", "lost_chip_s", "unpriced_chip_s"):
                total = sum(r[column] for r in that_day)
                assert total == pytest.approx(fleet[day][column], rel=1e-12), (kind, day, column)
            assert sum(r["jobs"] for r in that_day) == fleet[day]["jobs"]


def test_chargeback_by_month_equals_an_independent_sum(out: Path, by_hand: dict[str, Any]) -> None:
    """Per team, team and queue, team and owner: chip-time wanted and used (held), dollars
    wanted, used (every category but scheduling) and lost, and lost's parts, to the cent; each
    level adds up to the month's fleet row."""
    sums = _sum_by(
        by_hand,
        lambda r: [
            ("fleet", None, None, None),
            ("team", r["team"], None, None),
            ("team+queue", r["team"], r["queue"], None),
            ("team+owner", r["team"], None, r["owner"]),
        ],
    )
    rows = published_rows(out, "chargeback_by_month")
    assert {r["month"] for r in rows} == {NOVEMBER}
    expected = {k[:4] for k in sums.chip_s if k[4] == "wanted"}
    assert {(r["level"], r["team"], r["queue"], r["owner"]) for r in rows} == expected
    for r in rows:
        key = (r["level"], r["team"], r["queue"], r["owner"])
        assert r["wanted_chip_s"] == pytest.approx(sums.chip_s[(*key, "wanted")], rel=1e-12)
        assert r["used_chip_s"] == pytest.approx(sums.chip_s[(*key, "used")], rel=1e-12)
        for what in ("wanted", "used", "lost"):
            assert cents(r[f"{what}_usd"]) == cents(sums.usd.get((*key, what))), (key, what)
        if r["lost_usd"] is not None:
            parts = [r[f"lost_{p}_usd"] for p in ("scheduling", "runtime", "program", "unprofiled")]
            assert cents(sum(parts)) == cents(r["lost_usd"])
    fleet = next(r for r in rows if r["level"] == "fleet")
    for level in ("team", "team+queue", "team+owner"):
        mine = [r for r in rows if r["level"] == level]
        assert [r["rank"] for r in mine] == list(range(1, len(mine) + 1))
        for column in ("wanted_usd", "used_usd", "lost_usd", "lost_runtime_usd"):
            assert cents(sum(r[column] or 0.0 for r in mine)) == cents(fleet[column]), column
        for column in ("wanted_chip_s", "used_chip_s", "lost_chip_s", "unpriced_chip_s"):
            assert sum(r[column] for r in mine) == pytest.approx(fleet[column], rel=1e-12)


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(q * len(ordered)) - 1]


def test_queue_waiting_equals_an_independent_calculation(
    out: Path, by_hand: dict[str, Any]
) -> None:
    """Waiting chip-time is the ledger's scheduling; a job's wait is its scheduling chip-time
    over its chips; the median and p90 per queue and size class (and over all sizes) are the
    nearest-rank percentiles of those waits, a job that never waited counting 0."""
    jobs: dict[str, dict[str, Any]] = {}
    for r in by_hand["job_days"].values():
        job = jobs.setdefault(
            r["job_id"],
            {"queue": r["queue"], "size": _size_class(r["chips_requested"]),
             "chips": r["chips_requested"], "wanted": 0.0, "waiting": 0.0, "interrupted": 0.0},
        )  # fmt: skip
        job["wanted"] += r["wanted_chip_s"]
    for row in by_hand["ledger"]:
        job = jobs[row["job_id"]]
        if row["category"] == "scheduling":
            job["waiting"] += row["chip_s"]
        if row["category"] in ("lost_progress", "checkpoint_restore"):
            job["interrupted"] += row["chip_s"]
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for job in jobs.values():
        groups[(job["queue"], job["size"])].append(job)
        groups[(job["queue"], None)].append(job)
    rows = published_rows(out, "queue_waiting")
    assert {(r["queue"], r["size_class"]) for r in rows} == set(groups)
    assert {r["month"] for r in rows} == {NOVEMBER}
    for r in rows:
        mine = groups[(r["queue"], r["size_class"])]
        waits = [j["waiting"] / j["chips"] for j in mine]
        assert r["jobs"] == len(mine)
        assert r["jobs_waiting"] == sum(w > 0 for w in waits)
        assert r["wanted_chip_s"] == pytest.approx(sum(j["wanted"] for j in mine), rel=1e-12)
        assert r["waiting_chip_s"] == pytest.approx(sum(j["waiting"] for j in mine), rel=1e-12)
        assert r["interrupted_chip_s"] == pytest.approx(
            sum(j["interrupted"] for j in mine), rel=1e-12, abs=1e-9
        )
        assert r["wait_median_s"] == pytest.approx(_nearest_rank(waits, 0.5), rel=1e-12)
        assert r["wait_p90_s"] == pytest.approx(_nearest_rank(waits, 0.9), rel=1e-12)
        assert r["wait_max_s"] == pytest.approx(max(waits), rel=1e-12)
    # the queues' waiting adds up to the fleet's scheduling chip-time
    total = sum(r["waiting_chip_s"] for r in rows if r["size_class"] is None)
    assert total == pytest.approx(sum(j["waiting"] for j in jobs.values()), rel=1e-12)


def _json(*args: str | Path) -> dict[str, Any]:
    done = run_mpg(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def report(out: Path) -> Iterator[dict[str, Any]]:
    yield _json("report", "--out", out)


def test_the_report_shows_each_team_as_the_views_and_the_sums(
    report: dict[str, Any], out: Path, by_hand: dict[str, Any]
) -> None:
    """The report's teams and queues (its page's tables and the team chart) are the layer's:
    the same dollars as the independent sum over its period (the whole fleet) and as the
    slice_scorecard view (the last 7 days published: the same 3 days), worst first."""
    sums = _sum_by(by_hand, lambda r: [(k, r[k]) for k in ("team", "queue")])
    scorecard = {
        (r["slice_kind"], r["slice"]): r
        for r in published_rows(out, "slice_scorecard")
        if r["slice_kind"] in ("team", "queue")
    }
    shown = report["teams"]
    assert {(r["slice_kind"], r["slice"]) for r in shown} == set(scorecard)
    for r in shown:
        key = (r["slice_kind"], r["slice"])
        assert cents(r["lost_usd"]) == cents(sums.usd.get((*key, "lost")))
        assert cents(r["lost_usd"]) == cents(scorecard[key]["lost_usd"])
        assert r["rank"] == scorecard[key]["rank"]
        assert r["scheduling_chip_s"] == pytest.approx(sums.chip_s[(*key, "scheduling")])
    teams = sorted((r for r in shown if r["slice_kind"] == "team"), key=lambda r: r["rank"])
    order = sorted(
        teams, key=lambda r: (r["lost_usd"] is None, -(r["lost_usd"] or 0), -r["lost_chip_s"])
    )
    assert [r["slice"] for r in teams] == [r["slice"] for r in order]
    # the worst jobs hold each team's 10 worst (the team chart's click shows them), ranked
    jobs_of: dict[str | None, set[str]] = defaultdict(set)
    for r in by_hand["job_days"].values():
        jobs_of[r["team"]].add(r["job_id"])
    for team, team_jobs in jobs_of.items():
        ranks = {j["team_rank"] for j in report["worst_jobs"] if j["team"] == team}
        assert set(range(1, min(10, len(team_jobs)) + 1)) <= ranks, team


def test_compare_says_which_teams_moved_the_fleet(out: Path, by_hand: dict[str, Any]) -> None:
    """The decomposition with the fleet partitioned by team: every team's parts and the
    coverage part add up to the change in fleet MPG; each team's dollars lost in each period
    equal the independent sum, and their changes add up to the fleet's, to the cent."""
    compared = _json(
        "compare", "--out", out, "--base", "2026-11-20", "--current", "2026-11-21..2026-11-22"
    )
    base_day = date(2026, 11, 20)
    sums = _sum_by(by_hand, lambda r: [("base" if r["day"] == base_day else "current", r["team"])])
    teams = compared["teams"]["teams"]
    assert sum(t["parts"]["total"] for t in teams) + compared["teams"]["coverage"] == (
        pytest.approx(compared["change"], abs=1e-12)
    )
    assert {t["team"] for t in teams} == {
        NONE_NAMED if team is None else team for (_, team, what) in sums.chip_s if what == "wanted"
    }
    for t in teams:
        team = None if t["team"] == NONE_NAMED else t["team"]
        for period in ("base", "current"):
            assert cents(t[f"{period}_lost_usd"]) == cents(sums.usd.get((period, team, "lost")))
    dollars = compared["dollars"]
    change = sum(t["lost_usd_change"] or 0.0 for t in teams)
    assert cents(change) == cents(dollars["current"]["lost_usd"] - dollars["base"]["lost_usd"])
