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
class PeriodData:
    """The slices' chip-time sums in each period, the ledger per slice and category in
    chip-seconds and in dollars, and each slice's price (USD per chip-hour; None: no price)."""

    base: dict[Slice, Sums]
    current: dict[Slice, Sums]
    ledger: dict[str, dict[Slice, dict[str, float]]]  # period -> slice -> category -> chip_s
    ledger_usd: dict[str, dict[Slice, dict[str, float]]]  # period -> slice -> category -> usd
    prices: dict[str, dict[Slice, float | None]]  # period -> slice -> USD per chip-hour


def read_periods(out: Path, base: Period, current: Period, metric_version: str) -> PeriodData:
    """Both periods' sums, after checking that every day of each has published job-day rows."""
    if base.first <= current.last and current.first <= base.last:
        raise OptionsError(f"the periods {base} and {current} overlap")
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
    ledger_usd: dict[str, dict[Slice, dict[str, float]]] = {"base": {}, "current": {}}
    prices: dict[str, dict[Slice, float | None]] = {"base": {}, "current": {}}
    for period, *slice_, category, chip_s, usd, price in ledger_rows:
        key = (slice_[0], slice_[1], slice_[2])
        ledger[period].setdefault(key, {})[category] = chip_s
        if usd is not None:
            ledger_usd[period].setdefault(key, {})[category] = usd
        if prices[period].get(key) is None:
            prices[period][key] = price
    return PeriodData(
        base=by_period["base"],
        current=by_period["current"],
        ledger=ledger,
        ledger_usd=ledger_usd,
        prices=prices,
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
