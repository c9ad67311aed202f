"""The change in fleet MPG between two periods, split exactly into mix, SG, RG and PG parts.

The fleet MPG decomposed is the one the tables publish for any roll-up: SG x RG x PG of sums, PG
over the job-days that have one. Written as `K x M*`: `M* = sum_s w_s m_s` is the textbook
shift-share form, the slices' MPG `m_s` weighted by their share `w_s` of wanted chip-time, and
`K = MPG / M*` is the published formula's correction for PG coverage (1 where every slice's
productive time is profiled alike). So `ΔMPG = K̄ ΔM* + M̄* ΔK` (bars: the two periods' mean):
`ΔM*` splits by a centred shift-share into each slice's mix part (`Δw_s`) and its own change
(`Δm_s`), which splits into SG, RG and PG with log-mean (LMDI) weights; `M̄* ΔK` is the fleet's
coverage part. The parts add up to the change exactly; docs/compare.md has the derivation, the
edge cases and a worked example.

The fleet's and each slice's sums and ratios are the semantic layer's (`mpg_rollup`, read by
mpg.compare.read): nothing here computes a ratio of sums; the decomposition only combines them.

    >>> x = ("training", "jax", "tpu-v5e")
    >>> before = Sums(100, 80, 40, 20, 40, sg=0.8, rg=0.5, pg=0.5, pg_coverage=1.0, mpg=0.2)
    >>> after = Sums(100, 80, 20, 10, 20, sg=0.8, rg=0.25, pg=0.5, pg_coverage=1.0, mpg=0.1)
    >>> d = decompose(PeriodSums(before, {x: before}), PeriodSums(after, {x: after}))
    >>> round(d.change, 12), round(d.totals.rg, 12), round(d.totals.mix, 12)
    (-0.1, -0.1, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# workload_class, framework, chip_generation; or any other partition of the fleet (a team)
Slice = tuple[str, ...]
SLICE_COLUMNS = ("workload_class", "framework", "chip_generation")
# A slice's parts, and the fleet's: the slices' summed, and coverage, which is the fleet's only.
PART_NAMES = ("mix", "sg", "rg", "pg")
FLEET_PART_NAMES = (*PART_NAMES, "coverage")
# How the terminal and the report name each part.
PART_LABELS = {"mix": "mix", "sg": "SG", "rg": "RG", "pg": "PG", "coverage": "PG coverage"}

# What the mix part is, in words, wherever it is shown.
MIX_IN_WORDS = (
    "Mix is the part of the change that comes from where the chip-time went, each slice's own "
    "SG, RG and PG held: more of the fleet's wanted chip-time going to slices whose MPG is "
    "above the fleet's raises fleet MPG, to slices below it lowers it, though no slice changed."
)

# How far the parts may be from the change in floating point before it is a bug, not rounding.
ADD_UP_TOLERANCE = 1e-12


class UndefinedMPGError(ValueError):
    """A period whose fleet MPG is undefined (no wanted, allocated or profiled chip-time)."""


@dataclass(frozen=True)
class Sums:
    """A slice's (or the fleet's) chip-seconds over a period and their ratios, as the semantic
    layer rolls them up (`mpg_rollup`: ratios of sums by `mpg_goodput_ratios`); `ideal` and
    `profiled` cover the job-days that have a PG only. Ratios are None where undefined."""

    wanted: float
    all_allocated: float
    productive: float
    ideal: float
    profiled: float
    sg: float | None
    rg: float | None
    pg: float | None
    pg_coverage: float | None
    mpg: float | None


ZERO = Sums(0.0, 0.0, 0.0, 0.0, 0.0, None, None, None, None, None)


@dataclass(frozen=True)
class PeriodSums:
    """One period: the fleet's sums and each slice's (slices without job-days are absent)."""

    fleet: Sums
    slices: Mapping[Slice, Sums]


@dataclass(frozen=True)
class Parts:
    """A slice's (or the fleet's) share of the change in fleet MPG, in MPG units.

    `mix`: the slice's share of wanted chip-time moved (workload mix); `sg`, `rg`, `pg`: its own
    ratios moved; `coverage` (the fleet's only, 0 for a slice): how PG's coverage is spread over
    the slices moved, which the published formula values."""

    mix: float = 0.0
    sg: float = 0.0
    rg: float = 0.0
    pg: float = 0.0
    coverage: float = 0.0

    @property
    def total(self) -> float:
        return self.mix + self.sg + self.rg + self.pg + self.coverage

    def __add__(self, other: Parts) -> Parts:
        return Parts(*(getattr(self, n) + getattr(other, n) for n in FLEET_PART_NAMES))


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
    totals: Parts  # the slices' parts summed, and the coverage part

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


@dataclass(frozen=True)
class Ratios:
    """A slice's SG, RG and PG in a period as the decomposition takes them (PG imputed where the
    slice has no profile, docs/compare.md), and their product m."""

    sg: float
    rg: float
    pg: float

    def __iter__(self) -> Iterator[float]:
        return iter((self.sg, self.rg, self.pg))

    @property
    def product(self) -> float:
        return self.sg * self.rg * self.pg


def split_m(m0: Ratios, m1: Ratios) -> tuple[float, float, float]:
    """Δm of one slice (m = SG x RG x PG) as (SG part, RG part, PG part), adding up to it exactly.

    Both periods' m positive: LMDI, `L(m1, m0) x ln(SG1 / SG0)` and the same for RG and PG. One
    m zero: the whole change goes to the first ratio (SG, RG, PG) that is zero in that period,
    the limit of LMDI as that ratio tends to zero. Equal: no change."""
    p0, p1 = m0.product, m1.product
    if p0 > 0 and p1 > 0:
        weight = log_mean(p1, p0)
        sg, rg, pg = (weight * math.log(x1 / x0) for x0, x1 in zip(m0, m1, strict=True))
        return sg, rg, pg
    if p0 == p1:
        return 0.0, 0.0, 0.0
    zero_side = m0 if p0 == 0 else m1
    parts = [0.0, 0.0, 0.0]
    parts[next(i for i, x in enumerate(zero_side) if x == 0)] = p1 - p0
    return parts[0], parts[1], parts[2]


def decompose(base: PeriodSums, current: PeriodSums) -> Decomposition:
    """Split `MPG(current) - MPG(base)` of the fleet into per-slice Parts and the fleet's
    coverage part; raises UndefinedMPGError where a period's fleet MPG is undefined, and
    AssertionError if the parts fail to add up to the change (a bug)."""
    fleet0, fleet1 = defined_fleet(base, "base"), defined_fleet(current, "current")
    g_mean = _mean_pg(fleet0, fleet1)
    keys = sorted(base.slices.keys() | current.slices.keys())
    pairs = {key: (base.slices.get(key, ZERO), current.slices.get(key, ZERO)) for key in keys}
    ratios = {key: _ratios(s0, s1, g_mean) for key, (s0, s1) in pairs.items()}
    m_star = [
        sum(p[i].wanted / fleet.wanted * ratios[k][i].product for k, p in pairs.items())
        for i, fleet in enumerate((fleet0, fleet1))
    ]
    k0, k1 = (_correction(f, m) for f, m in zip((fleet0, fleet1), m_star, strict=True))
    k_mean, m_mean = (k0 + k1) / 2, (m_star[0] + m_star[1]) / 2
    changes = []
    for key, (s0, s1) in pairs.items():
        r0, r1 = ratios[key]
        w0, w1 = s0.wanted / fleet0.wanted, s1.wanted / fleet1.wanted
        mix = k_mean * (w1 - w0) * ((r0.product + r1.product) / 2 - m_mean)
        own = (k_mean * (w0 + w1) / 2 * part for part in split_m(r0, r1))
        changes.append(SliceChange(key, s0, s1, Parts(mix, *own)))
    totals = sum((c.parts for c in changes), Parts(coverage=m_mean * (k1 - k0)))
    decomposition = Decomposition(
        base=fleet0,
        current=fleet1,
        slices=tuple(sorted(changes, key=lambda c: (-abs(c.parts.total), c.slice))),
        totals=totals,
    )
    gap = abs(totals.total - decomposition.change)
    assert gap <= ADD_UP_TOLERANCE, f"parts miss the change in MPG by {gap}"
    return decomposition


def _ratios(s0: Sums, s1: Sums, g_mean: float) -> tuple[Ratios, Ratios]:
    """A slice's ratios in each period. A slice absent from a period (no wanted chip-time) takes
    the other period's ratios there, so all of its change is mix (it entered or left); a slice
    without a profile in a period takes its PG from the other period, or the fleet's mean PG
    where it has none in either, so its own PG part is zero and the published formula's
    valuation of its unprofiled time shows in the coverage part."""
    sg0, sg1 = s0.sg, s1.sg
    rg0, rg1 = s0.rg or 0.0, s1.rg or 0.0  # no all-allocated time: SG is 0 and decides
    pg0, pg1 = s0.pg, s1.pg
    pg0, pg1 = (
        pg0 if pg0 is not None else pg1 if pg1 is not None else g_mean,
        pg1 if pg1 is not None else pg0 if pg0 is not None else g_mean,
    )
    r0 = Ratios(sg0, rg0, pg0) if sg0 is not None else None
    r1 = Ratios(sg1, rg1, pg1) if sg1 is not None else None
    return _defined_ratios(r0 or r1), _defined_ratios(r1 or r0)


def _defined_ratios(ratios: Ratios | None) -> Ratios:
    assert ratios is not None, "a slice has wanted chip-time in one period at least"
    return ratios


def _correction(fleet: Sums, m_star: float) -> float:
    """K = MPG / M*: 1 where M* is 0 (MPG is then 0 too: every slice's m is)."""
    mpg = _defined_mpg(fleet)
    if m_star == 0:
        assert mpg == 0, "M* is 0 only where every slice's m, so the fleet's MPG, is"
        return 1.0
    return mpg / m_star


def defined_fleet(period: PeriodSums, name: str) -> Sums:
    """The period's fleet sums; UndefinedMPGError where its MPG is undefined (no wanted chip-time,
    or productive chip-time of which none is profiled)."""
    if period.fleet.mpg is None:
        missing = "wanted" if period.fleet.wanted <= 0 else "profiled productive"
        raise UndefinedMPGError(
            f"the {name} period has no {missing} chip-time: its MPG is undefined"
        )
    return period.fleet


def _mean_pg(fleet0: Sums, fleet1: Sums) -> float:
    """The PG a slice profiled in neither period takes: the mean of the fleet's PG over the
    periods that have one. A fleet without a PG in a period kept nothing there (its MPG is 0 by
    the definition), and with none in both every slice's m is 0 whatever PG it takes: 1 then."""
    defined = [pg for pg in (fleet0.pg, fleet1.pg) if pg is not None]
    return sum(defined) / len(defined) if defined else 1.0
