"""Data-quality expectation suites: declared in code, versioned, run inside `mpg run`.

Source suites (`scheduler`, `runtime`, `profiles`; severity warn) check each job bucket's
accepted records; output suites (`job_day_goodput`, `chip_time_ledger`, `goodput_by_slice`,
`record_counts`, `quarantine`; severity fail, but pg and mpg above 1 only warn) check the staged
tables before they are published. Results are rows of `mpg.schemas.VALIDATION_RESULTS`.

    validator = BucketValidator()        # once per worker (the GX engine starts GX here)
    parts = [validator(records) for records in buckets]
    sources = combine_results(parts)     # one row per expectation over all buckets
    outputs = validate_outputs(con, run_counts)
    report = render_report(concat([sources, outputs], VALIDATION_RESULTS))  # Markdown
    raise_for_failures(outputs)          # ValidationFailed if a fail-severity check failed

Expectations are declared as Great Expectations expectation types, and GX's meaning is their
definition. Two engines evaluate them (`mpg.quality.engine`): `mpg` (the default) in one
vectorised pass over the Arrow table (`mpg.quality.arrow_checks`), and `great-expectations`, GX
itself (`mpg.quality.gx`), the reference the tests hold the first to (`MPG_EXPECTATIONS` picks
the run's). Importing this package never imports GX (2.5-4 s); only its engine does, offline and
writing nothing.

Suite versions (append only; a suite's version changes whenever what it checks does):
- s1 (2026-11): every suite's first version.
- s2 (2026-11): quarantine: a row's source may also be `import` (`mpg import`'s quarantine).

Where Great Expectations is not the tool, and what does the work instead:
- column types and required values: checked on the Arrow table against `mpg.schemas` by either
  engine (GX sees the pandas frame it is handed, where a nullable int64 column becomes float64);
- joins and sums across tables: DuckDB queries in `sql/quality/` build one reconciliation frame
  per check, and the expectations assert on its computed column;
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
