"""Command-line arguments that several `mpg` commands share, declared once.

Nothing here imports more than the standard library: every command's options are declared, and
checked, before the command imports what it needs (docs/operations.md, "Start-up").
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn

from mpg.core.errors import OptionsError

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(text: str) -> dt.date:
    """One UTC day, YYYY-MM-DD; a ValueError that says what is wrong with anything else.

    >>> parse_day("2026-11-30")
    datetime.date(2026, 11, 30)
    >>> parse_day("2026-11-31")
    Traceback (most recent call last):
    ValueError: '2026-11-31' is not a date: day is out of range for month
    """
    if not _DAY.fullmatch(text):
        raise ValueError(f"{text!r} is not a day (YYYY-MM-DD)")
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a date: {exc}") from None


def day(text: str) -> dt.date:
    """An argparse type: one UTC day, YYYY-MM-DD (`parse_day`)."""
    try:
        return parse_day(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are mpg's one line and exit 2, like every user error,
    rather than the usage text and the error after it (`--help` gives the usage)."""

    def error(self, message: str) -> NoReturn:
        raise OptionsError(f"{message} (see {self.prog} --help)")


def named_subcommand(argv: Sequence[str] | None, names: Mapping[str, object]) -> str | None:
    """The subcommand among `names` that `argv` asks for (its first word that is not an option),
    or None if it names none; with `argv` None, None (declare every subcommand)."""
    if argv is None:
        return None
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in names else None


def add_subcommands(
    parser: argparse.ArgumentParser,
    dest: str,
    metavar: str | None,
    subcommands: Mapping[str, tuple[str, str | None, Callable[[argparse.ArgumentParser], None]]],
    argv: Sequence[str] | None,
) -> None:
    """One subparser per entry of `subcommands` (help, description, declare options); only the
    one `argv` names gets its options (all of them where `argv` is None), since declaring the
    others' would import their modules."""
    chosen = named_subcommand(argv, subcommands)
    subparsers = parser.add_subparsers(dest=dest, required=True, metavar=metavar)
    for name, (help_, description, declare) in subcommands.items():
        sub = subparsers.add_parser(name, help=help_, description=description or help_)
        if argv is None or name == chosen:
            declare(sub)
