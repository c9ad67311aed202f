"""The `mpg report` subcommand: the fleet report of a published output folder, as one HTML file.

`--compare BASE CURRENT` adds `mpg compare`'s explanation of the change in fleet MPG between two
periods (mpg.report.compare_charts). Exit status 0; a user error (no published tables, no rows in
the period, a bad or uncomparable pair of periods, a `--file` that cannot be written) is one line
and 2, like every `mpg` command. Everything that can be checked without the tables (the days, the
periods, where the file goes) is checked before Altair is imported and seconds go into rendering.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

from mpg.cli.arguments import add_metric_version_argument, add_out_argument, day
from mpg.compare.period import Period, check_periods, parse_period
from mpg.core.errors import OptionsError, UserError
from mpg.definitions.config import metric_version_to_read
from mpg.output.pointer import require_published

REPORT_FILE = "report.html"


class ReportFileError(UserError):
    """The report's file cannot be written where `--file` says."""


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
    parser.add_argument(
        "--json",
        action="store_true",
        help="print every figure of the page as JSON instead of writing it",
    )


def default_report_file(out: str) -> Path:
    """DIR/report.html for a local folder; ./report.html when DIR is on object storage (the
    page is a local file, opened in a browser)."""
    from mpg.core.locations import is_remote

    return Path(REPORT_FILE) if is_remote(out) else Path(out) / REPORT_FILE


def check_report_file(path: Path) -> None:
    """`--file` must name a file in an existing folder: found out after rendering, a mistake
    would cost the seconds rendering took and leave a partial file behind."""
    if path.is_dir():
        raise ReportFileError(
            f"--file {path} is a folder: name the HTML file to write, e.g. {path / REPORT_FILE}"
        )
    if not path.parent.is_dir():
        raise ReportFileError(f"--file {path}: the folder {path.parent} does not exist")


def write_report(target: Path, page: str) -> None:
    """`page` into `target` through a hidden partial file renamed into place, so a reader never
    sees half a report; a failed write leaves neither file, and is a user error naming it."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(page, encoding="utf-8")
        partial.replace(target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise ReportFileError(f"cannot write {target}: {exc.strerror or exc}") from exc


def _periods(args: argparse.Namespace) -> tuple[Period, Period] | None:
    if not args.compare:
        return None
    base, current = (parse_period(text) for text in args.compare)
    check_periods(base, current)
    return base, current


def report_command(args: argparse.Namespace) -> int:
    if args.first and args.last and args.first > args.last:
        raise OptionsError(f"--from {args.first} is after --to {args.last}")
    periods = _periods(args)
    if args.file is not None:
        check_report_file(args.file)
    require_published(args.out)  # no tables: one line, before Altair is imported (or pyarrow)
    version = metric_version_to_read(args.out, args.metric_version)
    from mpg.cli import progress
    from mpg.compare.comparison import compare_periods
    from mpg.report.data import read_report_data

    with progress.reporting("report"):
        with progress.phase("query", unit="days") as step:
            data = read_report_data(args.out, version, args.first, args.last)
            comparison = None
            if periods is not None:
                comparison = compare_periods(args.out, *periods, version)
            days = (data.last - data.first).days + 1
            step.done(days)
        if args.json:
            from mpg.report.export import json_default, report_json

            print(json.dumps(report_json(data, comparison), indent=2, default=json_default))
            return 0
        from mpg.report.layout import sections
        from mpg.report.page import render_page

        with progress.phase("render", unit="charts") as step:
            parts = sections(data, comparison)
            title = f"Fleet goodput, {data.first} to {data.last}"
            page = render_page(title, parts)
            step.done(sum(len(part.charts) for part in parts))
        target = args.file or default_report_file(args.out)
        write_report(target, page)
        progress.summary(days, unit="days")
    print(f"report: {target} ({len(page.encode('utf-8')) // 1024} KiB)")
    return 0
