"""Command-line arguments that several `mpg` commands share, declared once."""

from __future__ import annotations

import argparse
import datetime as dt


def day(text: str) -> dt.date:
    """An argparse type: one UTC day, YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a day (YYYY-MM-DD): {text!r}") from None


def add_out_argument(parser: argparse.ArgumentParser) -> None:
    """`--out`: the folder a run published (a path, gs:// or s3://), for the commands that
    read it."""
    parser.add_argument(
        "--out",
        default="out",
        help="folder `mpg run --out` wrote: a path, gs://... or s3://... (default: out)",
    )


def add_metric_version_argument(parser: argparse.ArgumentParser) -> None:
    """`--metric-version` of the commands that show figures of one version."""
    parser.add_argument(
        "--metric-version",
        help="metric definition of the figures (default: the current one, DIR/mpg.toml's or v1)",
    )
