"""Reading two periods of the published tables for `mpg compare`.

Figures come from `DIR/mpg.duckdb`, opened read-only (mpg.published), through
the queries in `sql/compare/` with the metric version and the days bound as parameters.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from mpg.compare.decompose import Slice, Sums
from mpg.errors import OptionsError, UserError
from mpg.published import open_published
from mpg.sqlfiles import load_sql

_RANGE = re.compile(r"(?P<first>[^.]+)\.\.(?P<last>[^.]+)")


class NoDataError(UserError):
    """A period with days the published tables have no job-day row for."""


@dataclass(frozen=True)
class Period:
    """UTC days `first` to `last`, both included."""

    first: dt.date
    last: dt.date

    def __str__(self) -> str:
        return f"{self.first}..{self.last}"

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1


def parse_period(text: str) -> Period:
    """`D1..D2` (YYYY-MM-DD, D1 <= D2), or `D` for one day.

    >>> parse_period("2026-01-01..2026-01-07").days
    7
    """
    match = _RANGE.fullmatch(text.strip())
    first, last = (match["first"], match["last"]) if match else (text.strip(), text.strip())
    try:
        period = Period(dt.date.fromisoformat(first), dt.date.fromisoformat(last))
    except ValueError:
        raise OptionsError(f"not a range of days (YYYY-MM-DD..YYYY-MM-DD): {text!r}") from None
    if period.first > period.last:
        raise OptionsError(f"range {text!r} ends before it starts")
    return period


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
    if base.first <= current.last and current.first <= base.last:
        raise OptionsError(f"the periods {base} and {current} overlap")
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
