"""`mpg report --json`: every figure the page shows, as data, from the rows the page is drawn
from (`ReportData`, the fix list's `fixes`, the `Comparison`): the headline and its
reconciliation, the scorecard per slice, the ledger's categories with their dollars, the worst
jobs, the teams and queues and their waiting, the fix list, the advice, the data-quality flags
and, with `--compare`, the comparison.

Values are the SQL's, untouched: chip-seconds and dollars as exact floats (the page rounds them
to write them), dates as ISO text, NULL as null.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import polars as pl

from mpg.compare.comparison import Comparison
from mpg.definitions.figures import chip_hours_reconciliation, reconciliation
from mpg.report.data import ReportData
from mpg.report.fixes import fix_rows


def _rows(frame: pl.DataFrame | None) -> list[dict[str, Any]] | None:
    return None if frame is None else frame.to_dicts()


def report_json(data: ReportData, comparison: Comparison | None = None) -> dict[str, Any]:
    """Everything the page shows, by section."""
    fleet = data.fleet
    return {
        "metric_version": data.metric_version,
        "period": {"first": data.first, "last": data.last},
        "headline": {
            **fleet,
            "unpriced_generations": [
                {"chip_generation": g, "unpriced_chip_s": s} for g, s in data.unpriced_generations()
            ],
            "reconciliation": reconciliation(fleet, data.unpriced_generations()),
            "chip_hours_reconciliation": chip_hours_reconciliation(fleet),
        },
        "scorecard": _rows(data.scorecard),
        "slices": _rows(data.slices),
        "ledger_categories": _rows(data.categories),
        "ledger_days": _rows(data.ledger_days),
        "waterfall": _rows(data.ledger_waterfall),
        "slice_ledger": _rows(data.slice_ledger),
        "goodput_days": _rows(data.slice_days),
        "size_class_days": _rows(data.size_class_days),
        "worst_jobs": _rows(data.worst_jobs),
        "teams": _rows(data.teams),
        "queue_waiting": _rows(data.queue_waiting),
        "fix_list": fix_rows(data),
        "advice": {
            "checkpoint_jobs": _rows(data.checkpoint_jobs),
            "checkpoint_slices": _rows(data.checkpoint_slices),
            "step_outliers": _rows(data.step_outliers),
            "stragglers": _rows(data.stragglers),
        },
        "data_quality": {
            "coverage_drops": _rows(data.coverage_drops),
            "record_counts": _rows(data.record_counts),
            "quarantine_reasons": _rows(data.quarantine_reasons),
            "validation_summary": _rows(data.validation_summary),
            "validation_warnings": _rows(data.validation_warnings),
        },
        "comparison": None if comparison is None else comparison.to_json(),
    }


def json_default(value: object) -> str:
    """Dates and times as ISO 8601 text (UTC for times)."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"not JSON: {value!r}")
