"""The change in dollars lost between two periods, split exactly into the parts of the MPG change.

Dollars lost are what MPG says did not become ideal work, in dollars: `D = U x (1 - G)`, where
`U` is the period's wanted chip-time in dollars (`chip_time_cost`: chip-hours x price) and `G` is
fleet MPG with every chip-second weighted by its price, that is the published formula (ratios of
sums) over each slice's chip-time sums times its price. A slice is one chip generation's, so one
price scales all its sums: its own SG, RG, PG and MPG are unchanged, and with one price for the
whole fleet `G` is fleet MPG and `D = price x wanted x (1 - MPG)`. Where every priced productive
chip-second has a profile, `D` is the ledger's dollars of every category but `ideal`.

So `ΔD = ΔU (1 - Ḡ) - Ū ΔG` exactly (bars: the two periods' mean), and `ΔG` splits as fleet MPG
does (mpg.compare.decompose, on the price-weighted sums) into each slice's mix, SG, RG and PG
parts and the fleet's coverage part. In dollars:

    volume_s = ΔU_s (1 - Ḡ)     the slice's dollars wanted grew, lost at the fleet's mean rate
    mix_s, sg_s, rg_s, pg_s = -Ū x (the slice's part of ΔG)      coverage = -Ū x coverage of ΔG

and they add up to `ΔD` (checked on every comparison). A positive part is more dollars lost.
Slices whose generation has no price are left out and their wanted chip-time reported beside
(`unpriced_chip_s`), never guessed; a price of 0 costs nothing and loses nothing.

    >>> x = ("training", "jax", "tpu-v5e")
    >>> base = PeriodSlices({x: Sums(3600, 3600, 3600, 1800, 3600)}, {}, {}, {x: 10.0})
    >>> now = PeriodSlices({x: Sums(7200, 7200, 3600, 1800, 3600)}, {}, {}, {x: 10.0})
    >>> d = dollar_change(base, now)  # $10 an hour; MPG 0.5, then twice the hours at RG 0.5
    >>> d.base.lost, d.current.lost, d.parts.volume, d.parts.rg
    (5.0, 15.0, 6.25, 3.75)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mpg.compare.decompose import PART_NAMES, Slice, Sums, decompose, fleet_sums
from mpg.compare.read import PeriodSlices

# The parts of a change in dollars lost: how much was wanted, then the parts of the MPG change.
DOLLAR_PART_NAMES = ("volume", *PART_NAMES, "coverage")
DOLLAR_PART_LABELS = {
    "volume": "volume",
    "mix": "mix",
    "sg": "SG",
    "rg": "RG",
    "pg": "PG",
    "coverage": "PG coverage",
}
# Parts may miss the change by this share of the dollars wanted before it is a bug.
ADD_UP_RELATIVE = 1e-12


@dataclass(frozen=True)
class DollarParts:
    """A slice's (or the fleet's) share of the change in dollars lost; `coverage` is the
    fleet's only."""

    volume: float = 0.0
    mix: float = 0.0
    sg: float = 0.0
    rg: float = 0.0
    pg: float = 0.0
    coverage: float = 0.0

    @property
    def total(self) -> float:
        return sum(getattr(self, n) for n in DOLLAR_PART_NAMES)

    def __add__(self, other: DollarParts) -> DollarParts:
        return DollarParts(*(getattr(self, n) + getattr(other, n) for n in DOLLAR_PART_NAMES))


@dataclass(frozen=True)
class DollarPeriod:
    """One period in dollars: wanted (`usd`), MPG weighted by price, dollars lost, the wanted
    chip-seconds without a price, and the ledger's dollars per category (chip_time_cost)."""

    usd: float
    mpg: float
    unpriced_chip_s: float
    by_category: Mapping[str, float]

    @property
    def lost(self) -> float:
        return self.usd * (1 - self.mpg)


@dataclass(frozen=True)
class DollarChange:
    base: DollarPeriod
    current: DollarPeriod
    parts: DollarParts  # the fleet's: the slices' summed, and coverage
    slices: tuple[tuple[Slice, DollarParts], ...]  # largest |total| first

    @property
    def change(self) -> float:
        return self.current.lost - self.base.lost


def sum_categories(ledgers: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Slices' ledgers (category -> chip-seconds or dollars) added up per category."""
    total: dict[str, float] = {}
    for ledger in ledgers:
        for category, value in ledger.items():
            total[category] = total.get(category, 0.0) + value
    return total


def _priced(period: PeriodSlices) -> tuple[dict[Slice, Sums], float]:
    """The slices with a positive price, their sums in dollars; and the unpriced chip-seconds."""
    priced, unpriced = {}, 0.0
    for key, sums in period.sums.items():
        price = period.prices.get(key)
        if price is None:
            unpriced += sums.wanted
        elif price > 0:
            per_s = price / 3600
            priced[key] = Sums(*(per_s * getattr(sums, f) for f in _SUM_FIELDS))
    return priced, unpriced


_SUM_FIELDS = ("wanted", "all_allocated", "productive", "ideal", "profiled")


def dollar_period(period: PeriodSlices, name: str) -> DollarPeriod:
    """One period in dollars; raises UndefinedMPGError where its priced chip-time has no MPG
    (nothing priced, or no priced profile), naming the period `name` ("base", "current")."""
    priced, unpriced = _priced(period)
    fleet = fleet_sums(priced, name)
    assert fleet.mpg is not None
    categories = sum_categories(period.ledger_usd.values())
    return DollarPeriod(fleet.wanted, fleet.mpg, unpriced, categories)


def dollar_change(base: PeriodSlices, current: PeriodSlices) -> DollarChange:
    """The change in dollars lost from `base` to `current`, split into parts that add up to it.
    Raises UndefinedMPGError where a period's priced chip-time has no MPG."""
    period0, period1 = dollar_period(base, "base"), dollar_period(current, "current")
    mpg_parts = decompose(_priced(base)[0], _priced(current)[0])
    g0, g1 = period0.mpg, period1.mpg
    u0, u1 = period0.usd, period1.usd
    lost_rate, u_mean = 1 - (g0 + g1) / 2, (u0 + u1) / 2
    slices = tuple(
        (
            c.slice,
            DollarParts(
                (c.current.wanted - c.base.wanted) * lost_rate,
                *(-u_mean * getattr(c.parts, n) for n in PART_NAMES),
            ),
        )
        for c in mpg_parts.slices
    )
    fleet = sum((p for _, p in slices), DollarParts(coverage=-u_mean * mpg_parts.totals.coverage))
    result = DollarChange(
        base=period0,
        current=period1,
        parts=fleet,
        slices=tuple(sorted(slices, key=lambda s: (-abs(s[1].total), s[0]))),
    )
    gap = abs(fleet.total - result.change)
    assert gap <= ADD_UP_RELATIVE * max(1.0, u0 + u1), f"parts miss the change by ${gap}"
    assert math.isfinite(result.change)
    return result
