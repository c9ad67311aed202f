"""The `mpg compare` subcommand: its options, and what it prints.

    mpg compare --base 2026-01-01..2026-01-07 --current 2026-01-08..2026-01-14 [--out out]
        [--metric-version v1] [--json]

Bad ranges, overlapping periods, a base period after the current one, days without published
rows and a period without a fleet MPG are one line and exit 2, like every `mpg` user error. The
periods are checked before DuckDB and rich are imported, so a mistyped day is answered at once.
"""

from __future__ import annotations

import argparse
import json

from mpg.cli.arguments import add_metric_version_argument, add_out_argument
from mpg.compare.period import check_periods, parse_period
from mpg.output.pointer import require_published


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base", required=True, help="the period compared against: D1..D2 (UTC days, inclusive)"
    )
    parser.add_argument("--current", required=True, help="the period explained: D3..D4")
    add_out_argument(parser)
    add_metric_version_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")


def compare_command(args: argparse.Namespace) -> int:
    base, current = parse_period(args.base), parse_period(args.current)
    check_periods(base, current)
    require_published(args.out)  # no tables: one line, before DuckDB and rich are imported
    from rich.console import Console

    from mpg.compare.comparison import compare_periods
    from mpg.compare.render import render

    comparison = compare_periods(args.out, base, current, args.metric_version)
    if args.json:
        print(json.dumps(comparison.to_json(), indent=2))
    else:
        render(comparison, Console(highlight=False))
    return 0
