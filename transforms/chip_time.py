"""Shared reading of a sweep's charged chip-time (`mpg.transforms.account.ChipTimeSweep`) for the
analyses beside the ledger (`checkpoints`, `step_times`): exact seconds, and charged chip-time per
category at any grain.
"""

from __future__ import annotations

import polars as pl

from mpg.definitions.metrics import SPAN_PRECEDENCE

# Every category `charge_segments` charges a chip-microsecond to.
CHARGED_CATEGORIES: tuple[str, ...] = ("scheduling", "runtime_idle", *SPAN_PRECEDENCE)


def seconds(micros: pl.Expr, per: float = 1e6) -> pl.Expr:
    """Microseconds (or chip-microseconds) to seconds by true division. Polars divides a column
    by a literal as a multiplication by its reciprocal, off by an ulp now and then: a value must
    not depend on how many rows were computed beside it."""
    return micros.cast(pl.Float64).map_batches(
        lambda s: s.to_numpy() / per, return_dtype=pl.Float64
    )


def charged_by(charged: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Charged chip-seconds per `keys` (job_id, or job_id and day) and category: one column per
    category of CHARGED_CATEGORIES, 0 where nothing was charged to it."""
    wide = charged.group_by(*keys, "category").agg(pl.col("chip_us").sum())
    return (
        wide.pivot(on="category", index=keys, values="chip_us")
        .with_columns(
            *(pl.lit(0.0).alias(c) for c in CHARGED_CATEGORIES if c not in wide["category"])
        )
        .with_columns(seconds(pl.col(c).fill_null(0.0)).alias(c) for c in CHARGED_CATEGORIES)
        .select(*keys, *CHARGED_CATEGORIES)
    )
