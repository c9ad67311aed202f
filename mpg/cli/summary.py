"""What `mpg run` and `mpg backfill` print when they end: the fleet's period totals and a
scorecard per slice, worst first (`mpg run --summary scorecard`, the default), or the fleet and
each chip generation per day (`--summary days`).

Every figure is a column of the layer's scorecard (the slice_scorecard view, sql/semantic/
scorecard.sql: the last 7 days published, beside the 7 before); this module writes them as
`mpg report` does for the same period (mpg.definitions.figures), and computes none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mpg.definitions.figures import (
    SHORT_LABELS,
    chip_hours,
    named,
    percent,
    points,
    reconciliation,
    usd,
    usd_change,
)

SUMMARIES = ("scorecard", "days")
# The scorecard's slice columns, in the order printed, and how they are named (owners are in
# the slice_scorecard view and the report's JSON, too many to print).
SLICE_TITLES = {
    "chip_generation": "chip generation",
    "workload_class": "workload class",
    "framework": "framework",
    "size_class": "job size (chips)",
    "team": "team",
    "queue": "queue",
}


def _fmt(value: object) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def days_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The fleet and each chip generation per day (sql/report/headline.sql)."""
    lines = [
        f"{'day':<11} {'ver':<4} {'chip generation':<16} {'chip-hours':>11} "
        f"{'SG':>6} {'RG':>6} {'PG':>6} {'MPG':>6}"
    ]
    for r in rows:
        scope = r["chip_generation"] or "fleet"
        lines.append(
            f"{r['day']!s:<11} {r['metric_version']:<4} {scope:<16} "
            f"{r['wanted_chip_s'] / 3600:>11.1f} {_fmt(r['sg']):>6} {_fmt(r['rg']):>6} "
            f"{_fmt(r['pg']):>6} {_fmt(r['mpg']):>6}"
        )
    if not rows:
        lines.append("(no job has wanted time in this input)")
    return lines


def _unpriced(rows: Sequence[dict[str, Any]]) -> list[tuple[str, float]]:
    """The chip generations with unpriced chip-time, most first (their scorecard rows)."""
    found = [
        (r["slice"], r["unpriced_chip_s"])
        for r in rows
        if r["slice_kind"] == "chip_generation" and r["unpriced_chip_s"]
    ]
    return sorted(found, key=lambda g: (-g[1], g[0]))


def period_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The period, the fleet's goodput and its dollars lost reconciled with their parts."""
    fleet = next(r for r in rows if r["slice_kind"] == "fleet")
    first, last = fleet["period_first"], fleet["period_last"]
    days = fleet["period_days"]
    previous = f"previous {days} days {fleet['previous_first']} .. {fleet['previous_last']}" + (
        "" if fleet["previous_complete"] else ": not all published, so no change is shown"
    )
    return [
        f"Period {first} .. {last} (the last {days} days published; `mpg report --from {first} "
        f"--to {last}` shows the same), {previous}",
        f"  {fleet['jobs']:,} jobs wanted {chip_hours(fleet['wanted_chip_s'] / 3600)} "
        f"chip-hours: fleet MPG {percent(fleet['mpg'])} = SG {percent(fleet['sg'])} x "
        f"RG {percent(fleet['rg'])} x PG {percent(fleet['pg'])} "
        f"(PG coverage {percent(fleet['pg_coverage'])}); "
        f"change {points(fleet['mpg_change'])}",
        f"  {reconciliation(fleet, _unpriced(rows))}",
        f"  of {usd(fleet['wanted_usd'])} wanted; change in dollars lost "
        f"{usd_change(fleet['lost_usd_change'])}",
    ]


def scorecard_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One table per slice column, its slices worst first: MPG and its parts, PG coverage,
    dollars lost, the main loss and the change against the previous period."""
    if not rows:
        return ["(no job has wanted time in this input)"]
    lines = period_lines(rows)
    head = (
        f"{'':<20} {'MPG':>6} {'SG':>6} {'RG':>6} {'PG':>6} {'cov':>6} {'$ lost':>15} "
        f"{'main loss':<13} {'MPG chg':>9} {'$ lost chg':>14}"
    )
    for kind, title in SLICE_TITLES.items():
        slices = [r for r in rows if r["slice_kind"] == kind]
        if not slices:
            continue
        lines += ["", f"{title}, worst first (dollars lost)", head]
        for r in slices:
            lost = "no price" if r["lost_usd"] is None else usd(r["lost_usd"])
            lines.append(
                f"{named(r['slice'])[:20]:<20} {percent(r['mpg']):>6} {percent(r['sg']):>6} "
                f"{percent(r['rg']):>6} {percent(r['pg']):>6} {percent(r['pg_coverage']):>6} "
                f"{lost:>15} {SHORT_LABELS.get(r['main_loss'], '-'):<13} "
                f"{points(r['mpg_change']):>9} {usd_change(r['lost_usd_change']):>14}"
            )
    return lines
