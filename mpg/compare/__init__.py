"""`mpg compare`: why fleet MPG changed between two periods.

    mpg compare --base 2026-01-01..2026-01-07 --current 2026-01-08..2026-01-14 [--json]

`compare_periods` returns a frozen `Comparison` (the exact decomposition into mix, SG, RG and PG
parts per slice, and the ledger categories that moved), for the terminal, `--json` and the fleet
report alike; `mpg.compare.render` draws it with rich. Nothing here imports Beam.

`Comparison` and `compare_periods` are imported when first used (they read the published tables
with DuckDB), so that `mpg compare`'s options are checked first (`mpg.compare.command`); the
decomposition and the periods import nothing heavy. (`decompose` is imported here, not lazily:
once its module is loaded, the package's attribute of that name would be the module.)
"""

from __future__ import annotations

from mpg.compare.decompose import Decomposition, Parts, Sums, decompose
from mpg.compare.period import Period, parse_period
from mpg.core.lazy import lazy_exports

_LAZY = {"Comparison": "mpg.compare.comparison", "compare_periods": "mpg.compare.comparison"}

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

__getattr__ = lazy_exports(__name__, _LAZY)
