"""The `mpg import` subcommand: one sub-command per format, each with the adapter's options."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from types import ModuleType

from mpg import progress
from mpg.adapters import ADAPTERS
from mpg.adapters.write import format_summary, write_conversion
from mpg.errors import TraceRootError


def _adapter(fmt: str) -> ModuleType:
    return importlib.import_module(ADAPTERS[fmt])


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    for fmt in ADAPTERS:
        adapter = _adapter(fmt)
        sub = formats.add_parser(fmt, help=adapter.HELP, description=adapter.HELP)
        sub.add_argument(
            "src", nargs="+", type=Path, metavar="SRC", help="input files, or folders to search"
        )
        sub.add_argument(
            "--out", type=Path, required=True, help="trace root to write (for mpg run --traces)"
        )
        adapter.add_arguments(sub)


def input_files(sources: list[Path], patterns: tuple[str, ...]) -> list[Path]:
    """The files named, and those under the folders named that match the format's patterns."""
    found: list[Path] = []
    for src in sources:
        if src.is_dir():
            matches = sorted({p for pattern in patterns for p in src.rglob(pattern) if p.is_file()})
            if not matches:
                raise TraceRootError(f"{src} holds no files named {' or '.join(patterns)}")
            found.extend(matches)
        elif src.is_file():
            found.append(src)
        else:
            raise TraceRootError(f"{src} does not exist")
    return list(dict.fromkeys(found))


def import_command(args: argparse.Namespace) -> int:
    adapter = _adapter(args.format)
    if args.out.exists() and not args.out.is_dir():
        raise TraceRootError(f"--out {args.out} is a file, not a folder")
    files = input_files(args.src, adapter.PATTERNS)
    with progress.reporting("import"):
        with progress.phase("convert") as step:
            conversion = adapter.convert(files, args)
            step.done(conversion.read)
        with progress.phase("write") as step:
            summary = write_conversion(args.out, args.format, conversion)
            step.done(summary.converted + summary.quarantined)
        progress.summary(summary.read)
    print(format_summary(summary, args.out))
    return 0
