"""What `mpg run` and `mpg backfill` say they changed (`mpg.cli.command.changed_days`)."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest

from mpg.cli.command import changed_days

D = datetime.date(2026, 11, 20)


@pytest.mark.parametrize(
    ("days", "count", "spanned"),
    [
        ([], "0 days", "0 days"),
        ([D], "1 day", "1 day (2026-11-20)"),
        ([D, D + datetime.timedelta(days=6), D], "2 days", "2 days (2026-11-20 .. 2026-11-26)"),
    ],
)
def test_days_are_counted_once_in_the_singular_for_one(
    days: list[datetime.date], count: str, spanned: str
) -> None:
    # both job tables change on a day: it is one day
    result = SimpleNamespace(changed_days=[(t, d) for d in days for t in ("a", "b")])
    assert (changed_days(result), changed_days(result, span=True)) == (count, spanned)
