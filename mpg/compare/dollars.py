"""The change in dollars lost between two periods, split exactly into parts.

Dollars lost are the semantic layer's: the dollars of every ledger category but ideal, over the
chip-time whose generation has a price (sql/semantic/job_days.sql), the figure the report, the
views, `mpg explain` and `mpg run` give for the same period. Per slice (one chip generation's,
so one price), `D = U x (s + r + p + u)`: its dollars wanted times the shares of them lost to
scheduling, runtime, program and unprofiled time. Its change splits exactly as a product of
two, and the fleet's is the sum of its slices':

    volume = dU x F               the slice's dollars wanted moved, lost at the fleet's mean rate
    mix    = dU x (rate_s - F)    ... at its own mean rate instead of the fleet's
    scheduling, runtime, program, unprofiled = mean(U) x the change of that share

(d: current less base; F: the fleet's dollars lost over dollars wanted, the two periods' mean).
sql/compare/dollar_parts.sql computes every part; this module reads them, and checks that they
add up to the change in the layer's own totals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mpg.compare.decompose import Slice
from mpg.definitions.figures import LOSS_PARTS, reconciliation

# The parts of a change in dollars lost: how much was wanted (volume, mix), then each part of
# the loss whose share moved.
DOLLAR_PART_NAMES = ("volume", "mix", *LOSS_PARTS)
DOLLAR_PART_LABELS = {
    "volume": "volume: more or fewer dollars wanted, lost at the fleet's rate",
    "mix": "mix: the dollars wanted moved to slices that lose more (or less) of them",
    "scheduling": "scheduling: waiting for chips",
    "runtime": "runtime: held chips, no kept progress",
    "program": "program: slower than the ideal",
    "unprofiled": "unprofiled: kept work with no profile",
}
# Parts may miss the change by this share of the dollars wanted before it is a bug.
ADD_UP_RELATIVE = 1e-12


@dataclass(frozen=True)
class DollarParts:
    """A slice's (or the fleet's) share of the change in dollars lost, in dollars."""

    volume: float = 0.0
    mix: float = 0.0
    scheduling: float = 0.0
    runtime: float = 0.0
    program: float = 0.0
    unprofiled: float = 0.0

    @property
    def total(self) -> float:
        return sum(getattr(self, n) for n in DOLLAR_PART_NAMES)


@dataclass(frozen=True)
class DollarPeriod:
    """One period in dollars, as the layer totals it: dollars wanted and lost (priced chip-time),
    the wanted chip-seconds without a price, and each ledger category's dollars."""

    usd: float
    lost: float
    unpriced_chip_s: float
    by_category: Mapping[str, float]
    lost_parts: Mapping[str, float]  # by LOSS_PARTS: what the period's dollars lost are made of

    @property
    def reconciliation(self) -> str:
        """`$X lost = scheduling $a + ... ; N unpriced chip-hours not in it`
        (mpg.definitions.figures)."""
        return reconciliation(
            {
                "lost_usd": self.lost,
                "unpriced_chip_s": self.unpriced_chip_s,
                **{f"lost_{p}_usd": v for p, v in self.lost_parts.items()},
            }
        )


@dataclass(frozen=True)
class DollarChange:
    base: DollarPeriod
    current: DollarPeriod
    parts: DollarParts  # the fleet's: its slices' summed
    slices: tuple[tuple[Slice, DollarParts], ...]  # largest |total| first

    @property
    def change(self) -> float:
        return self.current.lost - self.base.lost


class DollarsUnavailableError(ValueError):
    """A period without priced chip-time: its dollars lost are unknown, so is their change."""


def _parts(row: Mapping[str, Any]) -> DollarParts:
    return DollarParts(*(row[name] for name in DOLLAR_PART_NAMES))


def _period(
    fleet: Mapping[str, Any], moves: Iterable[Mapping[str, Any]], period: str
) -> DollarPeriod:
    return DollarPeriod(
        usd=fleet[f"{period}_wanted_usd"],
        lost=fleet[f"{period}_lost_usd"],
        unpriced_chip_s=fleet[f"{period}_unpriced_chip_s"],
        by_category={
            m["category"]: m[f"{period}_usd"] for m in moves if m["slice_kind"] == "fleet"
        },
        lost_parts={p: fleet[f"{period}_lost_{p}_usd"] for p in LOSS_PARTS},
    )


def dollar_change(parts: list[dict[str, Any]], moves: list[dict[str, Any]]) -> DollarChange:
    """The change in dollars lost from the rows of sql/compare/dollar_parts.sql (and each ledger
    category's dollars, sql/compare/ledger_moves.sql); DollarsUnavailableError where a period has no
    priced chip-time, AssertionError where the parts miss the change (a bug)."""
    fleet = next(r for r in parts if r["slice_kind"] == "fleet")
    for period in ("base", "current"):
        if not fleet[f"{period}_wanted_usd"]:
            raise DollarsUnavailableError(
                f"the {period} period has no priced chip-time: its dollars lost are unknown "
                "(set [prices] in DIR/mpg.toml)"
            )
    assert fleet["available"]
    result = DollarChange(
        base=_period(fleet, moves, "base"),
        current=_period(fleet, moves, "current"),
        parts=_parts(fleet),
        slices=tuple(
            ((r["workload_class"], r["framework"], r["chip_generation"]), _parts(r))
            for r in parts
            if r["slice_kind"] != "fleet"
        ),
    )  # fmt: skip
    gap = abs(result.parts.total - result.change)
    scale = max(1.0, result.base.usd + result.current.usd)
    assert gap <= ADD_UP_RELATIVE * scale, f"parts miss the change in dollars lost by ${gap}"
    assert math.isfinite(result.change)
    return result
