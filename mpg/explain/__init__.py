"""`mpg explain`: one job's chip-time ledger, from the published figures down to input lines.

    mpg explain --job train-00042 [--day 2026-11-21] [--out out] [--metric-version v1] [--json]

`explain_job` computes a frozen `Explanation` (no terminal needed: tests and `--json` read it);
`mpg.explain.render` draws it with rich. Nothing here imports Beam: explaining a job reads the
DuckDB file and the record store that `mpg run` wrote.
"""

from __future__ import annotations

from mpg.explain.build import explain_job
from mpg.explain.model import Explanation

__all__ = ["Explanation", "explain_job"]
