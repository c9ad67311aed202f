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
class PeriodData:
    """The slices' chip-time sums in each period, and the ledger per slice and category."""

    base: dict[Slice, Sums]
    current: dict[Slice, Sums]
    ledger: dict[str, dict[Slice, dict[str, float]]]  # period -> slice -> category -> chip_s


def read_periods(out: Path, base: Period, current: Period, metric_version: str) -> PeriodData:
    """Both periods' sums, after checking that every day of each has published job-day rows."""
    check_periods(base, current)
    params = {
        "metric_version": metric_version,
        "base_first": base.first,
        "base_last": base.last,
        "current_first": current.first,
        "current_last": current.last,
    }
    with open_published(out) as con:
        for name, period in (("base", base), ("current", current)):
            _check_days(con, name, period, metric_version)
        sums = con.execute(load_sql("compare/slice_sums.sql"), params).fetchall()
        ledger_rows = con.execute(load_sql("compare/ledger_by_slice.sql"), params).fetchall()
    by_period: dict[str, dict[Slice, Sums]] = {"base": {}, "current": {}}
    for period, workload, framework, generation, *chip_s in sums:
        by_period[period][(workload, framework, generation)] = Sums(*chip_s)
    ledger: dict[str, dict[Slice, dict[str, float]]] = {"base": {}, "current": {}}
    for period, workload, framework, generation, category, chip_s in ledger_rows:
        ledger[period].setdefault((workload, framework, generation), {})[category] = chip_s
    return PeriodData(base=by_period["base"], current=by_period["current"], ledger=ledger)


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
