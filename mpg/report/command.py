"""The `mpg report` subcommand: the fleet report of a published output folder, as one HTML file.

`--compare BASE CURRENT` adds `mpg compare`'s explanation of the change in fleet MPG between two
periods (mpg.report.compare_charts). Exit status 0; a user error (no published tables, no rows in
the period, a bad or uncomparable pair of periods, an unwritable file) is one line and 2, like
every `mpg` command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mpg import progress
from mpg.arguments import add_metric_version_argument, add_out_argument, day
from mpg.compare import compare_periods, parse_period
from mpg.config import metric_version_to_read
from mpg.errors import OptionsError
from mpg.report.data import read_report_data
from mpg.report.layout import sections
from mpg.report.page import render_page

REPORT_FILE = "report.html"


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    add_out_argument(parser)
    add_metric_version_argument(parser)
    parser.add_argument("--from", dest="first", type=day, help="first day, UTC (default: all)")
    parser.add_argument("--to", dest="last", type=day, help="last day, UTC (default: all)")
    parser.add_argument(
        "--file", type=Path, help=f"the HTML file to write (default: DIR/{REPORT_FILE})"
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("BASE", "CURRENT"),
        help="add why fleet MPG changed from BASE to CURRENT, each D1..D2 (as mpg compare)",
    )


def default_report_file(out: str) -> Path:
    """DIR/report.html for a local folder; ./report.html when DIR is on object storage (the
    page is a local file, opened in a browser)."""
    from mpg.storage import is_remote

    return Path(REPORT_FILE) if is_remote(out) else Path(out) / REPORT_FILE


def report_command(args: argparse.Namespace) -> int:
    if args.first and args.last and args.first > args.last:
        raise OptionsError(f"--from {args.first} is after --to {args.last}")
    version = metric_version_to_read(args.out, args.metric_version)
    with progress.reporting("report"):
        with progress.phase("query", unit="days") as step:
            data = read_report_data(args.out, version, args.first, args.last)
            comparison = None
            if args.compare:
                base, current = (parse_period(text) for text in args.compare)
                comparison = compare_periods(args.out, base, current, version)
            days = (data.last - data.first).days + 1
            step.done(days)
        with progress.phase("render", unit="charts") as step:
            parts = sections(data, comparison)
            title = f"Fleet goodput, {data.first} to {data.last}"
            page = render_page(title, parts)
            step.done(sum(len(part.charts) for part in parts))
        target = args.file or default_report_file(args.out)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(page, encoding="utf-8")
        partial.replace(target)
        progress.summary(days, unit="days")
    print(f"report: {target} ({len(page.encode('utf-8')) // 1024} KiB)")
    return 0
