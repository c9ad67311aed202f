"""`mpg compare`: why fleet MPG changed between two periods.

    mpg compare --base 2026-01-01..2026-01-07 --current 2026-01-08..2026-01-14 [--json]

`compare_periods` returns a frozen `Comparison` (the exact decomposition into mix, SG, RG and PG
parts per slice, and the ledger categories that moved), for the terminal, `--json` and the fleet
report alike; `mpg.compare.render` draws it with rich. Nothing here imports Beam.
"""

from __future__ import annotations

from mpg.compare.comparison import Comparison, compare_periods
from mpg.compare.decompose import Decomposition, Parts, Sums, decompose
from mpg.compare.read import Period, parse_period

__all__ = [
    "Comparison",
    "Decomposition",
    "Parts",
    "Period",
    "Sums",
    "compare_periods",
    "decompose",
    "parse_period",
]
