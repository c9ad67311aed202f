"""`mpg compare`: why fleet MPG changed between two periods.

    mpg compare --base 2026-01-01..2026-01-07 --current 2026-01-08..2026-01-14 [--json]

`compare_periods` returns a frozen `Comparison` (the exact decomposition into mix, SG, RG and PG
parts per slice, and the ledger categories that moved), for the terminal, `--json` and the fleet
report alike; `mpg.compare.render` draws it with rich. Nothing here imports Beam.

The names below are imported when first used, so that `mpg compare`'s options are checked before
DuckDB is loaded (`mpg.compare.command`).
"""

from __future__ import annotations

from mpg.lazy import lazy_exports

_EXPORTS = {
    "Comparison": "mpg.compare.comparison",
    "compare_periods": "mpg.compare.comparison",
    "Decomposition": "mpg.compare.decompose",
    "Parts": "mpg.compare.decompose",
    "Sums": "mpg.compare.decompose",
    "decompose": "mpg.compare.decompose",
    "Period": "mpg.compare.period",
    "parse_period": "mpg.compare.period",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
