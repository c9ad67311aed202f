"""`mpg explain`: one job's chip-time ledger, from the published figures down to input lines.

    mpg explain --job train-00042 [--day 2026-11-21] [--out out] [--metric-version v1] [--json]

`explain_job` computes a frozen `Explanation` (no terminal needed: tests and `--json` read it);
`mpg.explain.render` draws it with rich. Nothing here imports Beam: explaining a job reads the
DuckDB file and the record store that `mpg run` wrote. The names below are imported when first
used, so that `mpg explain`'s options are checked before Polars is loaded.
"""

from __future__ import annotations

from mpg.core.lazy import lazy_exports

_EXPORTS = {"explain_job": "mpg.explain.build", "Explanation": "mpg.explain.model"}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
