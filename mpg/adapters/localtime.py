"""Local wall-clock times without a zone, as cluster traces write them, read as UTC instants.

Philly's job log and Slurm's `sacct` print times in the local zone of the machine that wrote
them, and name no zone. The user says which (`--timezone`, an IANA name; default UTC, so that
nothing is shifted by a guess). Two hours a year are special in a zone with daylight saving
time: a local time in the hour repeated when DST ends is read as its earlier instant (there is
no way to tell, and it is off by an hour at most), and one in the hour skipped when DST starts
never occurred, so it is an error of the record (`nonexistent local time`).
"""

from __future__ import annotations

import polars as pl

from mpg.adapters.canonical import UTC_TIME
from mpg.core.errors import OptionsError


def check_timezone(timezone: str) -> str:
    """`timezone` if Polars knows it, else a one-line error naming the option."""
    try:
        pl.Series([0], dtype=pl.Datetime("us")).dt.replace_time_zone(timezone)
    except pl.exceptions.PolarsError as exc:
        raise OptionsError(f"--timezone {timezone!r} is not an IANA time zone") from exc
    return timezone


def to_utc(column: str, timezone: str, time_format: str, label: str = "") -> list[pl.Expr]:
    """`column` (local wall-clock text in `time_format`) as `<column>_utc`, and `<column>_bad`:
    why it cannot be read (`unparseable time`, `nonexistent local time`, followed by `label`
    where one is given), else null. A null `column` is a missing time, not a bad one."""
    naive = pl.col(column).str.strptime(pl.Datetime("us"), time_format, strict=False)
    utc = naive.dt.replace_time_zone(
        timezone, ambiguous="earliest", non_existent="null"
    ).dt.convert_time_zone("UTC")
    bad = (
        pl.when(pl.col(column).is_not_null() & naive.is_null())
        .then(pl.lit(f"unparseable time{label}"))
        .when(naive.is_not_null() & utc.is_null())
        .then(pl.lit(f"nonexistent local time{label}"))
    )
    return [utc.cast(UTC_TIME).alias(f"{column}_utc"), bad.alias(f"{column}_bad")]
