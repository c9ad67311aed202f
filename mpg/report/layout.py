"""The report's sections in page order, built from the data read (and the comparison, if asked).

The order answers a reader's questions in turn: how good is the fleet and which slices are worst
(summary and scorecard), what to fix first (the fix list), what is this data (about), how goodput
moved, where the chip-hours went, which slices, jobs and teams lost them, what it cost (dollars and
kWh), what to change (checkpoint advice, step-time outliers), whether the data can be trusted
(quality), and, with --compare, what changed between two periods.
"""

from __future__ import annotations

from altair.utils.schemapi import debug_mode

from mpg.compare.comparison import Comparison
from mpg.report.advice import checkpoint_section, step_time_section
from mpg.report.blocks import Section
from mpg.report.charts import fleet_charts, ledger_charts, size_class_charts
from mpg.report.compare_charts import comparison_section
from mpg.report.costs import cost_section
from mpg.report.data import ReportData
from mpg.report.facts import about_section, quality_section, summary_section
from mpg.report.fixes import fix_section
from mpg.report.slices import SLICE_TITLES, slice_charts, worst_jobs_charts
from mpg.report.teams import team_section


def sections(data: ReportData, comparison: Comparison | None = None) -> list[Section]:
    """Every section of the report, in page order.

    Altair checks every object against the Vega-Lite schema as it is built, data rows included,
    which took most of the report's time; that is off here, and the tests validate each finished
    spec once (tests/e2e/test_report.py)."""
    with debug_mode(False):
        return _sections(data, comparison)


def _sections(data: ReportData, comparison: Comparison | None) -> list[Section]:
    found = [
        summary_section(data),
        fix_section(data),
        about_section(data),
        Section("goodput", "Fleet goodput", "", tuple(fleet_charts(data))),
        Section(
            "where",
            "Where the chip-hours went",
            "The chip-time ledger puts every wanted chip-hour in one category (docs/metrics.md).",
            tuple(ledger_charts(data)),
        ),
        *(
            Section(
                f"per-{kind.replace('_', '-')}", f"Per {title}", "", tuple(slice_charts(data, kind))
            )
            for kind, title in SLICE_TITLES.items()
        ),
        Section("size", "By job size", "", tuple(size_class_charts(data))),
        Section("jobs", "Worst jobs", "", tuple(worst_jobs_charts(data))),
        team_section(data),
        cost_section(data),
        checkpoint_section(data),
        step_time_section(data),
        quality_section(data),
    ]
    if comparison is not None:
        found.append(comparison_section(comparison))
    return found
