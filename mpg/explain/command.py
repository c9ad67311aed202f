"""The `mpg explain` subcommand: its options, and what it prints.

Exit status: 0, or 1 when the record store no longer gives the published ledger (the warning says
where); a user error (no published tables, unknown job, a day without a row, a damaged file) is
one line and 2, like every `mpg` command. Polars, DuckDB and rich are imported only once the
options have been checked.
"""

from __future__ import annotations

import argparse
import json

from mpg.cli.arguments import add_metric_version_argument, add_out_argument, day
from mpg.definitions.config import metric_version_to_read
from mpg.output.pointer import require_published


def add_explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job", required=True, help="job id")
    parser.add_argument("--day", type=day, help="one UTC day, YYYY-MM-DD (default: all days)")
    add_out_argument(parser)
    add_metric_version_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the explanation as JSON")


def explain_command(args: argparse.Namespace) -> int:
    require_published(args.out)  # no tables: one line, before Polars is imported (or pyarrow)
    version = metric_version_to_read(args.out, args.metric_version)
    from rich.console import Console

    from mpg.explain.build import explain_job
    from mpg.explain.render import render

    explanation = explain_job(args.out, args.job, args.day, version)
    if args.json:
        print(json.dumps(explanation.to_json(), indent=2))
    else:
        render(explanation, Console(highlight=False))
    return 0 if explanation.matches else 1
