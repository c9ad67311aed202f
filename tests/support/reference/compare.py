"""Comparing the pipeline's published tables with the reference's: the tolerances the grader
allows, keyed tables' differences in words, and a run's tables read back from mpg.duckdb."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

REL = 1e-9  # what the grader allows between the pipeline and an independent calculation
ABS = 1e-9  # chip-seconds: float noise allowed where the exact answer is zero

JOB_DAY_NUMBERS = (
    "wanted_chip_s",
    "all_allocated_chip_s",
    "productive_chip_s",
    "ideal_chip_s",
    "sg",
    "rg",
    "pg",
    "mpg",
)
SLICE_NUMBERS = (
    "wanted_chip_s",
    "all_allocated_chip_s",
    "productive_chip_s",
    "ideal_chip_s",
    "pg_coverage",
    "sg",
    "rg",
    "pg",
    "mpg",
)


def close(expected: float | None, got: float | None, rel: float = REL) -> bool:
    if expected is None or got is None:
        return expected is None and got is None
    return math.isclose(expected, got, rel_tol=rel, abs_tol=ABS)


def differences(
    expected: dict[Any, Any], got: dict[Any, Any], compare: Callable[[Any, Any], list[str]]
) -> list[str]:
    """Human-readable differences between two keyed tables (at most 15 shown)."""
    out = [
        f"missing row {k}: expected {expected[k]}" for k in sorted(expected.keys() - got, key=str)
    ]
    out += [f"extra row {k}: {got[k]}" for k in sorted(got.keys() - expected, key=str)]
    for k in sorted(expected.keys() & got.keys(), key=str):
        out += [f"{k} {d}" for d in compare(expected[k], got[k])]
    return out[:15] + ([f"... and {len(out) - 15} more"] if len(out) > 15 else [])


def numbers(names: tuple[str, ...], rel: float = REL) -> Callable[[Any, Any], list[str]]:
    def compare(expected: Any, got: dict[str, Any]) -> list[str]:
        return [
            f"{n}: expected {getattr(expected, n)!r}, got {got[n]!r}"
            for n in names
            if not close(getattr(expected, n), got[n], rel)
        ]

    return compare


def scalar(expected: float, got: float) -> list[str]:
    return [] if close(expected, got) else [f"expected {expected!r}, got {got!r}"]


def read_tables(db: Path) -> dict[str, list[dict[str, Any]]]:
    tables = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for name in (
            "job_day_goodput",
            "chip_time_ledger",
            "goodput_by_slice",
            "quarantine",
            "record_counts",
        ):
            cursor = con.execute(f"select * from {name}")
            columns = [d[0] for d in cursor.description]
            rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
            tables[name] = rows
    return tables
