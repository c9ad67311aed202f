"""Data-quality expectation suites: declared in code, versioned, run inside `mpg run`.

Source suites (`scheduler`, `runtime`, `profiles`; severity warn) check each job bucket's
accepted records. Results are rows of `mpg.schemas.VALIDATION_RESULTS`.

    validator = BucketValidator()        # once per worker: starts Great Expectations
    parts = [validator(records) for records in buckets]
    sources = combine_results(parts)     # one row per expectation over all buckets

Importing this package does not import Great Expectations (2.5-4 s); constructing a
`BucketValidator` does. The engine runs GX offline and writes nothing (`mpg.quality.engine`).

Suite versions (append only; a suite's version changes whenever what it checks does):
- s1 (2026-11): every suite's first version.

Where Great Expectations is not the tool, and what does the work instead:
- column types and required values: checked on the Arrow table against `mpg.schemas`
  (`mpg.quality.arrow_checks`);
- combining per-bucket results: GX validates one batch at a time and has no notion of adding
  up partial results, so `combine_results` does it over the result rows.
"""

from __future__ import annotations

from mpg.quality.results import (
    ValidationFailed,
    combine_results,
    fatal_failures,
    raise_for_failures,
)
from mpg.quality.sources import BucketValidator, source_suites, validate_bucket

__all__ = [
    "BucketValidator",
    "ValidationFailed",
    "combine_results",
    "fatal_failures",
    "raise_for_failures",
    "source_suites",
    "validate_bucket",
]
