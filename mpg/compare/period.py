"""A period of UTC days as `mpg compare` and `mpg report --compare` name it, checked before
anything is read (so a bad range is a fast one-line error).

    >>> parse_period("2026-01-01..2026-01-07").days
    7
    >>> parse_period("2026-11-31")
    Traceback (most recent call last):
    mpg.core.errors.OptionsError: not a range of days: '2026-11-31' is not a date: day is out of range for month
"""  # noqa: E501

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from mpg.cli.arguments import parse_day
from mpg.core.errors import OptionsError

_SEPARATOR = ".."


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
    """`D1..D2` (YYYY-MM-DD, D1 <= D2), or `D` for one day; an OptionsError naming the part that
    is not a day."""
    ends = text.strip().split(_SEPARATOR)
    if len(ends) not in (1, 2):
        raise OptionsError(f"not a range of days (YYYY-MM-DD..YYYY-MM-DD): {text!r}")
    try:
        first, last = parse_day(ends[0]), parse_day(ends[-1])
    except ValueError as exc:
        raise OptionsError(f"not a range of days: {exc}") from None
    if first > last:
        raise OptionsError(f"range {text!r} ends before it starts")
    return Period(first, last)


def check_periods(base: Period, current: Period) -> None:
    """Two periods a comparison can explain: apart, and the base one first. A base after the
    current period would explain the change backwards, every sign flipped."""
    if base.first <= current.last and current.first <= base.last:
        raise OptionsError(f"the periods {base} and {current} overlap")
    if base.first > current.last:
        raise OptionsError(
            f"the base period {base} comes after the current period {current}: the base is the "
            "earlier one (swap them to explain the change from the earlier to the later)"
        )
