"""Validation results as data: combining per-bucket parts, and what makes a run fail.

Source suites run per job bucket, wherever Beam puts the bucket; `combine_results` adds the parts
up so the run reports one row per expectation, the same however the buckets were spread:
counts are summed, an expectation succeeds only if it succeeded on every part, and the sample is
the first unexpected rows by the target's index (file, line), which is exact because each part's
sample holds that part's first rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mpg.core.errors import UserError
from mpg.quality.arrow_checks import SAMPLE_SIZE
from mpg.schemas import VALIDATION_RESULTS, concat

# What identifies one expectation across parts (everything but what was found).
_KEY = (
    "suite",
    "suite_version",
    "target",
    "expectation",
    "column",
    "kwargs",
    "severity",
    "description",
)


def _sort_key(row: dict[str, object]) -> tuple[tuple[bool, object], ...]:
    # A sample row starts with the target's index columns; NULLs first, as in a sorted frame.
    return tuple((value is not None, value) for value in row.values())


def _merge_samples(samples: pl.Series) -> str | None:
    rows = [row for sample in samples if sample is not None for row in json.loads(sample)]
    if not rows:
        return None
    return json.dumps(sorted(rows, key=_sort_key)[:SAMPLE_SIZE])


def _merge_observed(observed: pl.Series) -> str | None:
    # Split what an earlier combine joined, so that combining is associative.
    values = sorted({v for joined in observed if joined is not None for v in joined.split("; ")})
    return "; ".join(values) if values else None


def combine_results(parts: Iterable[pa.Table]) -> pa.Table:
    """One VALIDATION_RESULTS row per expectation from per-bucket parts, in declared order.

    Associative and commutative (a combined result can be combined again), so it can serve as
    Beam's `CombineGlobally(combine_results)`.
    """
    frame = pl.from_arrow(concat(parts, VALIDATION_RESULTS))
    assert isinstance(frame, pl.DataFrame)
    combined = frame.group_by(list(_KEY), maintain_order=True).agg(
        pl.col("success").all(),
        pl.col("element_count").sum(),
        # NULL (a column-level expectation) stays NULL rather than becoming 0.
        pl.when(pl.col("unexpected_count").is_not_null().any())
        .then(pl.col("unexpected_count").sum())
        .alias("unexpected_count"),
        pl.col("unexpected_sample").map_batches(
            lambda s: pl.Series([_merge_samples(s)]), return_dtype=pl.String, returns_scalar=True
        ),
        pl.col("observed").map_batches(
            lambda s: pl.Series([_merge_observed(s)]), return_dtype=pl.String, returns_scalar=True
        ),
    )
    return combined.to_arrow().select(VALIDATION_RESULTS.names).cast(VALIDATION_RESULTS)


def fatal_failures(results: pa.Table) -> pa.Table:
    """The failed expectations of severity "fail": any of them fails the run."""
    fatal = pc.and_(pc.equal(results.column("severity"), "fail"), pc.invert(results["success"]))
    return results.filter(fatal)


def _finding(row: dict[str, object]) -> str:
    if row["unexpected_count"] is not None:
        return f"{row['unexpected_count']} of {row['element_count']} rows unexpected"
    return f"observed {row['observed']}"


# N818 asks for an "Error" suffix; "ValidationFailed" already says it, and is the name the run's
# wiring uses.
class ValidationFailed(UserError):  # noqa: N818
    """Expectations of severity "fail" failed: the run stops before publishing, so the previous
    tables stay in place. `failures` holds their VALIDATION_RESULTS rows."""

    def __init__(self, failures: pa.Table, report: Path | None = None) -> None:
        first = failures.slice(0, 1).to_pylist()[0]
        count = failures.num_rows
        where = f"; report: {report}" if report else ""
        super().__init__(
            f"{count} expectation{'s' if count != 1 else ''} of severity fail failed; first: "
            f"{first['suite']} / {first['target']}: {first['description']} ({_finding(first)})"
            f"{where}"
        )
        self.failures = failures


def raise_for_failures(results: pa.Table, report: Path | None = None) -> None:
    """Raise ValidationFailed (naming the `report` file) when `results` has a failed expectation
    of severity "fail"."""
    failures = fatal_failures(results)
    if failures.num_rows:
        raise ValidationFailed(failures, report)
