"""The change in fleet MPG between two periods, split exactly into mix, SG, RG and PG parts.

The fleet MPG decomposed is the one the tables publish for any roll-up: SG x RG x PG of sums, PG
over the job-days that have one. That is `A x G`, with `A = productive / wanted` (SG x RG) a
wanted-time-weighted mean of the slices' A, and `G` (PG) a mean of the slices' PG weighted by
profiled productive time. So `ΔMPG = Ḡ ΔA + Ā ΔG` (bars: the two periods' mean), each split by a
shift-share over slices into a mix part and a within-slice part, the within part of A split into
SG and RG with log-mean (LMDI) weights. The parts add up to the change exactly; docs/compare.md
has the derivation, the edge cases and a worked example.

    >>> base = {("training", "jax", "tpu-v5e"): Sums(100, 80, 40, 20, 40)}
    >>> now = {("training", "jax", "tpu-v5e"): Sums(100, 80, 20, 10, 20)}
    >>> d = decompose(base, now)
    >>> round(d.change, 12), round(d.totals.rg, 12), round(d.totals.mix, 12)
    (-0.1, -0.1, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

Slice = tuple[str, str, str]  # workload_class, framework, chip_generation
SLICE_COLUMNS = ("workload_class", "framework", "chip_generation")
PART_NAMES = ("mix_wanted", "mix_profiled", "sg", "rg", "pg")
# How the terminal and the report name each part.
PART_LABELS = {
    "mix_wanted": "mix (wanted)",
    "mix_profiled": "mix (profiled)",
    "sg": "SG",
    "rg": "RG",
    "pg": "PG",
}

# How far the parts may be from the change in floating point before it is a bug, not rounding.
ADD_UP_TOLERANCE = 1e-12


class UndefinedMPGError(ValueError):
    """A period whose fleet MPG is undefined (no wanted, allocated or profiled chip-time)."""


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


@dataclass(frozen=True)
class Sums:
    """Chip-seconds of a slice (or the fleet) over a period; `ideal` and `profiled` over the
    job-days that have a PG only."""

    wanted: float
    all_allocated: float
    productive: float
    ideal: float
    profiled: float

    def __add__(self, other: Sums) -> Sums:
        return Sums(
            self.wanted + other.wanted,
            self.all_allocated + other.all_allocated,
            self.productive + other.productive,
            self.ideal + other.ideal,
            self.profiled + other.profiled,
        )

    @property
    def sg(self) -> float | None:
        return _ratio(self.all_allocated, self.wanted)

    @property
    def rg(self) -> float | None:
        return _ratio(self.productive, self.all_allocated)

    @property
    def pg(self) -> float | None:
        return _ratio(self.ideal, self.profiled)

    @property
    def pg_coverage(self) -> float | None:
        return _ratio(self.profiled, self.productive)

    @property
    def mpg(self) -> float | None:
        """SG x RG x PG, as goodput_by_slice publishes it (null where any is)."""
        sg, rg, pg = self.sg, self.rg, self.pg
        return None if sg is None or rg is None or pg is None else sg * rg * pg

    @property
    def a(self) -> float:
        """SG x RG as one ratio, productive / wanted (wanted is positive for any slice)."""
        return self.productive / self.wanted


ZERO = Sums(0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Parts:
    """One slice's (or the fleet's) share of the change in fleet MPG, in MPG units.

    `mix_wanted`: the slice's share of wanted chip-time moved; `mix_profiled`: its share of
    profiled productive chip-time (the weights of fleet PG) moved; `sg`, `rg`, `pg`: its own
    ratios moved."""

    mix_wanted: float = 0.0
    mix_profiled: float = 0.0
    sg: float = 0.0
    rg: float = 0.0
    pg: float = 0.0

    @property
    def mix(self) -> float:
        return self.mix_wanted + self.mix_profiled

    @property
    def total(self) -> float:
        return self.mix_wanted + self.mix_profiled + self.sg + self.rg + self.pg

    def __add__(self, other: Parts) -> Parts:
        return Parts(*(getattr(self, n) + getattr(other, n) for n in PART_NAMES))


@dataclass(frozen=True)
class SliceChange:
    slice: Slice
    base: Sums  # ZERO where the slice has no job-day in the period
    current: Sums
    parts: Parts


@dataclass(frozen=True)
class Decomposition:
    base: Sums  # the fleet's sums
    current: Sums
    slices: tuple[SliceChange, ...]  # by |total part|, largest first
    totals: Parts

    @property
    def base_mpg(self) -> float:
        return _defined_mpg(self.base)

    @property
    def current_mpg(self) -> float:
        return _defined_mpg(self.current)

    @property
    def change(self) -> float:
        return self.current_mpg - self.base_mpg


def _defined_mpg(sums: Sums) -> float:
    mpg = sums.mpg
    assert mpg is not None, "decompose() refuses a period without a fleet MPG"
    return mpg


def log_mean(x: float, y: float) -> float:
    """L(x, y) = (x - y) / (ln x - ln y), and x where x == y: the LMDI weight (x, y > 0)."""
    return x if x == y else (x - y) / (math.log(x) - math.log(y))


def split_a(base: Sums, current: Sums) -> tuple[float, float]:
    """ΔA of one slice (A = SG x RG) as (SG part, RG part), adding up to it exactly.

    Both periods' A positive: LMDI, `L(A1, A0) x ln(SG1/SG0)` and the same for RG. One A zero:
    the whole change goes to the ratio that is zero in that period (SG if it is, else RG), the
    limit of LMDI as that ratio tends to zero. Both zero: no change."""
    a0, a1 = base.a, current.a
    if a0 > 0 and a1 > 0:
        weight = log_mean(a1, a0)
        sg = weight * math.log(_positive(current.sg) / _positive(base.sg))
        rg = weight * math.log(_positive(current.rg) / _positive(base.rg))
        return sg, rg
    if a0 == a1:
        return 0.0, 0.0
    zero_side = base if a0 == 0 else current
    return (a1 - a0, 0.0) if zero_side.all_allocated == 0 else (0.0, a1 - a0)


def _positive(value: float | None) -> float:
    assert value is not None and value > 0, "a positive A has positive SG and RG"
    return value


def decompose(base: Mapping[Slice, Sums], current: Mapping[Slice, Sums]) -> Decomposition:
    """Split `MPG(current) - MPG(base)` of the fleet made of these slices (slices without wanted
    chip-time in a period may be absent from its mapping) into per-slice Parts; raises
    UndefinedMPGError where a period's fleet MPG is undefined, and AssertionError if the parts
    fail to add up to the change (a bug)."""
    fleet0, fleet1 = _fleet(base, "base"), _fleet(current, "current")
    a_mean = (fleet0.a + fleet1.a) / 2
    g_mean = (_defined(fleet0.pg) + _defined(fleet1.pg)) / 2
    changes = []
    for key in sorted(base.keys() | current.keys()):
        s0, s1 = base.get(key, ZERO), current.get(key, ZERO)
        changes.append(
            SliceChange(key, s0, s1, _slice_parts(s0, s1, fleet0, fleet1, a_mean, g_mean))
        )
    totals = sum((c.parts for c in changes), Parts())
    decomposition = Decomposition(
        base=fleet0,
        current=fleet1,
        slices=tuple(sorted(changes, key=lambda c: (-abs(c.parts.total), c.slice))),
        totals=totals,
    )
    gap = abs(totals.total - decomposition.change)
    assert gap <= ADD_UP_TOLERANCE, f"parts miss the change in MPG by {gap}"
    return decomposition


def _fleet(slices: Mapping[Slice, Sums], period: str) -> Sums:
    fleet = sum(slices.values(), ZERO)
    if fleet.mpg is None:
        missing = (
            "wanted"
            if fleet.sg is None
            else "all-allocated"
            if fleet.rg is None
            else "profiled productive"
        )
        raise UndefinedMPGError(
            f"the {period} period has no {missing} chip-time: its MPG is undefined"
        )
    return fleet


def _defined(value: float | None) -> float:
    assert value is not None
    return value


def _slice_parts(
    s0: Sums, s1: Sums, fleet0: Sums, fleet1: Sums, a_mean: float, g_mean: float
) -> Parts:
    """One slice's parts. A slice absent from a period (no wanted, or no profiled, chip-time)
    takes the other period's ratio there, so that all of its change is mix (entry or exit)."""
    w0, w1 = s0.wanted / fleet0.wanted, s1.wanted / fleet1.wanted
    a0 = s0.a if s0.wanted > 0 else s1.a
    a1 = s1.a if s1.wanted > 0 else s0.a
    sg = rg = 0.0
    if s0.wanted > 0 and s1.wanted > 0:
        sg_a, rg_a = split_a(s0, s1)
        sg, rg = g_mean * (w0 + w1) / 2 * sg_a, g_mean * (w0 + w1) / 2 * rg_a
    mix_wanted = g_mean * (w1 - w0) * ((a0 + a1) / 2 - a_mean)

    v0, v1 = s0.profiled / fleet0.profiled, s1.profiled / fleet1.profiled
    mix_profiled = pg = 0.0
    if v0 > 0 or v1 > 0:
        g0 = _defined(s0.pg if v0 > 0 else s1.pg)
        g1 = _defined(s1.pg if v1 > 0 else s0.pg)
        mix_profiled = a_mean * (v1 - v0) * ((g0 + g1) / 2 - g_mean)
        pg = a_mean * (v0 + v1) / 2 * (g1 - g0)
    return Parts(mix_wanted=mix_wanted, mix_profiled=mix_profiled, sg=sg, rg=rg, pg=pg)
