"""Reading two periods of the published tables for `mpg compare`.

Figures come from `DIR/mpg.duckdb`, opened read-only (mpg.output.published), through the queries in
`sql/compare/`, which read the semantic layer's roll-up (`mpg_rollup`) with the metric version
and the days bound as parameters: the fleet's and each slice's sums and ratios, each team's, the
ledger categories that moved, and the parts of the change in dollars lost.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from mpg.compare.decompose import PeriodSums, Slice, Sums
from mpg.compare.period import Period, check_periods
from mpg.core.errors import UserError
from mpg.definitions.figures import named
from mpg.output.published import open_published
from mpg.sql.files import load_sql

SLICE_KIND = "workload_class+framework+chip_generation"  # mpg_rollup's name of a finest slice


class NoDataError(UserError):
    """A period with days the published tables have no job-day row for."""


@dataclass(frozen=True)
class TeamSums:
    """One period's teams (sql/compare/period_slices.sql's team rows): the fleet partitioned by
    team, keyed `(team,)` (NONE_NAMED where the input named none), and each team's dollars lost
    (None: no price) and chip-hours lost."""

    sums: PeriodSums
    lost_usd: dict[Slice, float | None]
    lost_chip_s: dict[Slice, float]


@dataclass(frozen=True)
class PeriodData:
    base: PeriodSums
    current: PeriodSums
    ledger_moves: list[dict[str, Any]]  # sql/compare/ledger_moves.sql
    dollar_parts: list[dict[str, Any]]  # sql/compare/dollar_parts.sql
    base_teams: TeamSums
    current_teams: TeamSums


def _rows(con: duckdb.DuckDBPyConnection, name: str, params: dict) -> list[dict[str, Any]]:
    cursor = con.execute(load_sql(f"compare/{name}.sql"), params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _sums(row: dict[str, Any]) -> Sums:
    return Sums(
        row["wanted_chip_s"],
        row["all_allocated_chip_s"],
        row["productive_chip_s"],
        row["ideal_chip_s"],
        row["profiled_chip_s"],
        row["sg"],
        row["rg"],
        row["pg"],
        row["pg_coverage"],
        row["mpg"],
    )


def slice_key(row: dict[str, Any]) -> Slice:
    return row["workload_class"], row["framework"], row["chip_generation"]


def read_period(con: duckdb.DuckDBPyConnection, period: Period, metric_version: str) -> PeriodSums:
    """One period's fleet and slices from an open published database."""
    return _period(con, period, metric_version)[0]


def _period(
    con: duckdb.DuckDBPyConnection, period: Period, metric_version: str
) -> tuple[PeriodSums, TeamSums]:
    """One period's fleet and slices, and its fleet and teams (one query)."""
    params = {"metric_version": metric_version, "first": period.first, "last": period.last}
    rows = _rows(con, "period_slices", params)
    fleet = next(_sums(r) for r in rows if r["slice_kind"] == "fleet")
    slices = PeriodSums(
        fleet, {slice_key(r): _sums(r) for r in rows if r["slice_kind"] == SLICE_KIND}
    )
    return slices, _teams(fleet, [r for r in rows if r["slice_kind"] == "team"])


def _teams(fleet: Sums, teams: list[dict[str, Any]]) -> TeamSums:
    def key(row: dict[str, Any]) -> Slice:
        return (named(row["team"]),)

    return TeamSums(
        PeriodSums(fleet, {key(r): _sums(r) for r in teams}),
        {key(r): r["lost_usd"] for r in teams},
        {key(r): r["lost_chip_s"] for r in teams},
    )


def read_periods(out: Path, base: Period, current: Period, metric_version: str) -> PeriodData:
    """Both periods, after checking that every day of each has published job-day rows."""
    check_periods(base, current)
    both = {
        "metric_version": metric_version,
        "base_first": base.first,
        "base_last": base.last,
        "current_first": current.first,
        "current_last": current.last,
    }
    with open_published(out) as con:
        for name, period in (("base", base), ("current", current)):
            _check_days(con, name, period, metric_version)
        base_slices, base_teams = _period(con, base, metric_version)
        current_slices, current_teams = _period(con, current, metric_version)
        return PeriodData(
            base=base_slices,
            current=current_slices,
            ledger_moves=_rows(con, "ledger_moves", both),
            dollar_parts=_rows(con, "dollar_parts", both),
            base_teams=base_teams,
            current_teams=current_teams,
        )


def _check_days(
    con: duckdb.DuckDBPyConnection, name: str, period: Period, metric_version: str
) -> None:
    params = {"metric_version": metric_version, "first": period.first, "last": period.last}
    found = {
        day for (day,) in con.execute(load_sql("compare/days_with_data.sql"), params).fetchall()
    }
    missing = [
        period.first + dt.timedelta(days=i)
        for i in range(period.days)
        if period.first + dt.timedelta(days=i) not in found
    ]
    if missing:
        shown = ", ".join(str(d) for d in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise NoDataError(
            f"the {name} period {period} has days with no published job-day rows "
            f"(metric version {metric_version}): {shown}"
        )
