"""Data-quality expectation suites: declared in code, versioned, run inside `mpg run`.

Source suites (`scheduler`, `runtime`, `profiles`; severity warn) check each job bucket's
accepted records; output suites (`job_day_goodput`, `chip_time_ledger`, `goodput_by_slice`,
`record_counts`, `quarantine`; severity fail, but pg and mpg above 1 only warn) check the staged
tables before they are published. Results are rows of `mpg.schemas.VALIDATION_RESULTS`.

    validator = BucketValidator()        # once per worker: starts Great Expectations
    parts = [validator(records) for records in buckets]
    sources = combine_results(parts)     # one row per expectation over all buckets
    outputs = validate_outputs(con, run_counts)
    report = render_report(concat([sources, outputs], VALIDATION_RESULTS))  # Markdown
    raise_for_failures(outputs)          # ValidationFailed if a fail-severity check failed

Importing this package does not import Great Expectations (2.5-4 s); constructing a
`BucketValidator` or calling `validate_outputs` does. The engine runs GX offline and writes
nothing (`mpg.quality.engine`).

Suite versions (append only; a suite's version changes whenever what it checks does):
- s1 (2026-11): every suite's first version.
- s2 (2026-11): quarantine: a row's source may also be `import` (`mpg import`'s quarantine).

Where Great Expectations is not the tool, and what does the work instead:
- column types: checked on the Arrow table against `mpg.schemas` (GX sees the pandas frame it is
  handed, where a nullable int64 column becomes float64);
- joins and sums across tables: DuckDB queries in `sql/quality/` build one reconciliation frame
  per check, and GX asserts on its computed column;
- combining per-bucket results: GX validates one batch at a time and has no notion of adding up
  partial results, so `combine_results` does it over the result rows.
"""

from __future__ import annotations

from mpg.quality.outputs import OUTPUT_SUITES, validate_outputs
from mpg.quality.report import render_report
from mpg.quality.results import (
    ValidationFailed,
    combine_results,
    fatal_failures,
    raise_for_failures,
)
from mpg.quality.sources import BucketValidator, source_suites, validate_bucket

__all__ = [
    "OUTPUT_SUITES",
    "BucketValidator",
    "ValidationFailed",
    "combine_results",
    "fatal_failures",
    "raise_for_failures",
    "render_report",
    "source_suites",
    "validate_bucket",
    "validate_outputs",
]
