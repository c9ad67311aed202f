"""Reading the expectation suites' results (`mpg.quality`): one target's findings."""

from __future__ import annotations

import pyarrow as pa


def findings(results: pa.Table, target: str) -> dict[str, tuple[bool, int, int | None]]:
    """description -> (success, element_count, unexpected_count) for one target."""
    return {
        r["description"]: (r["success"], r["element_count"], r["unexpected_count"])
        for r in results.to_pylist()
        if r["target"] == target
    }


def failed(results: pa.Table, target: str) -> dict[str, tuple[int, int | None]]:
    """description -> (element_count, unexpected_count) of the target's failed expectations."""
    return {d: (n, u) for d, (ok, n, u) in findings(results, target).items() if not ok}
