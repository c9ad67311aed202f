"""Metric definitions, versioned. The one place that says what every published number means.

Changelog (append only; a new version is written beside the old ones, never over them):
- v1 (2026-11): MPG = SG x RG x PG as in spec fleet-traces.md v1. PG per job-day is
  sum(model_flops / (chips x peak_flops_per_chip)) / sum(step_time_s) over that day's profile
  records; a generation without a peak has no PG.
- v2 (2026-11): v1 with a memory-bound roofline: each profile record's ideal step time is
  max(model_flops / (chips x peak_flops_per_chip), hbm_bytes / (chips x hbm_bytes_per_s)), so a
  step that must move its bytes through HBM is not charged as program loss for the time that
  takes. The compute term stands alone where the memory term is unknown: a record without
  hbm_bytes, or a generation whose catalog entry has no bandwidth. A generation without a peak
  still has no PG (its bandwidth alone does not make a roofline). SG, RG, the span precedence and
  the ledger categories are v1's.

The chip-time categories and their precedence are part of the definition too: they decide which
activity a second of all-allocated time is charged to when spans overlap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Polars is imported where an expression is built: the CLI starts without it.
    import polars as pl

# Which span a second belongs to when several cover it: the first of these that is active.
SPAN_PRECEDENCE: tuple[str, ...] = (
    "kept_step",
    "lost_step",
    "checkpoint_save",
    "checkpoint_restore",
    "compile",
    "init",
    "data_wait",
)

# Stored ledger categories: an append-only list of strings (never renumbered enums).
LEDGER_CATEGORIES: tuple[str, ...] = (
    "ideal",
    "program_loss",
    "productive_unprofiled",
    "lost_progress",
    "checkpoint_save",
    "checkpoint_restore",
    "compile",
    "init",
    "data_wait",
    "runtime_idle",
    "scheduling",
)


@dataclass(frozen=True)
class MetricVersion:
    """A version of the PG definition: how ideal step time is derived from a profile record.

    `ideal_step_time` is a Polars expression over a profile record joined with its chip catalog
    entry (columns model_flops, hbm_bytes, chips, peak_flops_per_chip, hbm_bytes_per_s).
    """

    name: str
    ideal_step_time: Callable[[], pl.Expr]


def _compute_roofline() -> pl.Expr:
    """v1: the step's FLOPs at the chips' peak rate; null where the generation has no peak."""
    import polars as pl

    return pl.col("model_flops") / (pl.col("chips") * pl.col("peak_flops_per_chip"))


def _memory_roofline() -> pl.Expr:
    """v2: the larger of the compute time and the time to move the step's HBM bytes.

    `max_horizontal` skips nulls, so an unknown memory term (no hbm_bytes, no bandwidth) leaves
    the compute term; the `when` keeps a generation without a peak null, as in v1, rather than
    letting the memory term alone stand for the roofline.
    """
    import polars as pl

    compute = _compute_roofline()
    memory = pl.col("hbm_bytes") / (pl.col("chips") * pl.col("hbm_bytes_per_s"))
    return pl.when(compute.is_not_null()).then(pl.max_horizontal(compute, memory))


METRIC_VERSIONS: dict[str, MetricVersion] = {
    "v1": MetricVersion(name="v1", ideal_step_time=_compute_roofline),
    "v2": MetricVersion(name="v2", ideal_step_time=_memory_roofline),
}
DEFAULT_METRIC_VERSION = "v1"
