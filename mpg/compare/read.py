"""Reading two periods of the published tables for `mpg compare`.

Figures come from `DIR/mpg.duckdb`, opened read-only (mpg.published), through
the queries in `sql/compare/` with the metric version and the days bound as parameters.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb

from mpg.compare.decompose import Slice, Sums
from mpg.compare.period import Period, check_periods
from mpg.errors import UserError
from mpg.published import open_published
from mpg.sqlfiles import load_sql


class NoDataError(UserError):
    """A period with days the published tables have no job-day row for."""


@dataclass(frozen=True)
class PeriodSlices:
    """One period: each slice's chip-time sums, its ledger in chip-seconds and in dollars (priced
    chip-time only) per category, and its price (USD per chip-hour; None: no price)."""

    sums: dict[Slice, Sums]
    ledger: dict[Slice, dict[str, float]]
    ledger_usd: dict[Slice, dict[str, float]]
    prices: dict[Slice, float | None]


@dataclass(frozen=True)
class PeriodData:
    base: PeriodSlices
    current: PeriodSlices


def read_period(
    con: duckdb.DuckDBPyConnection, period: Period, metric_version: str
) -> PeriodSlices:
    """One period's slices from an open published database (sql/compare/)."""
    params = {"metric_version": metric_version, "first": period.first, "last": period.last}
    sums = {
        (workload, framework, generation): Sums(*chip_s)
        for workload, framework, generation, *chip_s in con.execute(
            load_sql("compare/slice_sums.sql"), params
        ).fetchall()
    }
    ledger: dict[Slice, dict[str, float]] = {}
    ledger_usd: dict[Slice, dict[str, float]] = {}
    prices: dict[Slice, float | None] = {}
    rows = con.execute(load_sql("compare/ledger_by_slice.sql"), params).fetchall()
    for workload, framework, generation, category, chip_s, usd, price in rows:
        key = (workload, framework, generation)
        ledger.setdefault(key, {})[category] = chip_s
        if usd is not None:
            ledger_usd.setdefault(key, {})[category] = usd
        if prices.get(key) is None:
            prices[key] = price
    return PeriodSlices(sums, ledger, ledger_usd, prices)


def read_periods(out: Path, base: Period, current: Period, metric_version: str) -> PeriodData:
    """Both periods' slices, after checking that every day of each has published job-day rows."""
    check_periods(base, current)
    with open_published(out) as con:
        for name, period in (("base", base), ("current", current)):
            _check_days(con, name, period, metric_version)
        return PeriodData(
            base=read_period(con, base, metric_version),
            current=read_period(con, current, metric_version),
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
