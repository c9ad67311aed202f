"""The published ledger of a job as a waterfall, and its check against a recomputation.

The waterfall walks wanted chip-time down to ideal: wanted, less `scheduling`, is all-allocated;
less each runtime loss, productive; less `program_loss` (and, over days of which only some have a
PG, `productive_unprofiled`), ideal. Where no shown day has a PG, productive ends the walk as
`productive_unprofiled`. Totals are the published job-day columns, losses the published ledger
rows, so each step is a number someone can quote.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import polars as pl

from mpg.definitions.metrics import LEDGER_CATEGORIES
from mpg.explain.model import Difference, Figure, JobDay, Provenance, Ratios

_PRODUCTIVE_PARTS = ("ideal", "program_loss", "productive_unprofiled")
# Between all-allocated and productive, in the ledger's own order.
RUNTIME_LOSSES = tuple(c for c in LEDGER_CATEGORIES if c not in (*_PRODUCTIVE_PARTS, "scheduling"))
# How far a recomputed figure may differ from the published one: the two sum the same numbers,
# possibly in another order, so only rounding may part them.
RELATIVE_TOLERANCE = 1e-9


def waterfall(
    summary: dict[str, Any], ledger: pl.DataFrame, records: dict[str, Provenance]
) -> tuple[Figure, ...]:
    """The steps from wanted to ideal for one published goodput row (sql/explain/job_goodput.sql)
    and its ledger rows (sql/explain/job_ledger.sql), each with its share of wanted chip-time as
    SQL gives it (None where nothing was wanted)."""
    rows = {r["category"]: r for r in ledger.iter_rows(named=True)}

    def figure(name: str, chip_s: float, share: float | None, is_total: bool) -> Figure:
        # A zero figure has no records behind it, even where spans of its kind were all outranked.
        behind = records.get(name, ()) if chip_s else ()
        return Figure(name, is_total, chip_s, share, behind)

    def total(name: str) -> Figure:
        return figure(name, summary[f"{name}_chip_s"], summary[f"{name}_share"], is_total=True)

    def loss(name: str, is_total: bool = False) -> Figure:
        row = rows.get(name, {"chip_s": 0.0, "share": 0.0 if summary["wanted_chip_s"] else None})
        return figure(name, row["chip_s"], row["share"], is_total)

    steps = [
        total("wanted"),
        loss("scheduling"),
        total("all_allocated"),
        *(loss(c) for c in RUNTIME_LOSSES),
        total("productive"),
    ]
    if summary["ideal_chip_s"] is None:
        steps.append(loss("productive_unprofiled", is_total=True))
    else:
        steps.append(loss("program_loss"))
        if "productive_unprofiled" in rows:
            steps.append(loss("productive_unprofiled"))
        steps.append(total("ideal"))
    return tuple(steps)


def ratios(summary: dict[str, Any]) -> Ratios:
    return Ratios(
        sg=summary["sg"],
        rg=summary["rg"],
        pg=summary["pg"],
        pg_coverage=summary["pg_coverage"],
        mpg=summary["mpg"],
    )


def by_category(ledger: pl.DataFrame) -> dict[str, float]:
    """Ledger rows (category, chip_s) as a mapping, in the ledger's category order."""
    found = dict(zip(ledger["category"].to_list(), ledger["chip_s"].to_list(), strict=True))
    return {c: found[c] for c in LEDGER_CATEGORIES if c in found}


def job_days(goodput: pl.DataFrame, ledger: pl.DataFrame) -> tuple[JobDay, ...]:
    """Published job-day rows, each with its ledger."""
    return tuple(
        JobDay(
            day=row["day"],
            wanted_chip_s=row["wanted_chip_s"],
            all_allocated_chip_s=row["all_allocated_chip_s"],
            productive_chip_s=row["productive_chip_s"],
            ideal_chip_s=row["ideal_chip_s"],
            sg=row["sg"],
            rg=row["rg"],
            pg=row["pg"],
            mpg=row["mpg"],
            ledger=by_category(ledger.filter(pl.col("day") == row["day"])),
        )
        for row in goodput.iter_rows(named=True)
    )


def compare_ledgers(
    published: pl.DataFrame, recomputed: pl.DataFrame, days: tuple[dt.date, ...]
) -> tuple[Difference, ...]:
    """Figures (day, category, chip_s) of the shown days that the recomputation does not give.

    A category missing on one side counts as zero there, as a left-out zero row does.
    """
    keys = ["day", "category"]
    both = (
        published.filter(pl.col("day").is_in(days))
        .select(*keys, pl.col("chip_s").alias("published"))
        .join(
            recomputed.filter(pl.col("day").is_in(days)).select(
                *keys, pl.col("chip_s").alias("recomputed")
            ),
            on=keys,
            how="full",
            coalesce=True,
        )
        .fill_null(0.0)
        .sort(keys)
    )
    return tuple(
        Difference(**row)
        for row in both.iter_rows(named=True)
        if not math.isclose(row["published"], row["recomputed"], rel_tol=RELATIVE_TOLERANCE)
    )
