"""The `mpg import` subcommand: one sub-command per format, each with the adapter's options.

Only the adapter of the format named on the command line is imported (`mpg import --help` lists
them all from `ADAPTERS` alone).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from types import ModuleType

from mpg.adapters import ADAPTERS, arguments
from mpg.arguments import add_subcommands
from mpg.errors import TraceRootError


def _adapter(fmt: str) -> ModuleType:
    return importlib.import_module(ADAPTERS[fmt].module)


def _declare(fmt: str, sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "src", nargs="+", type=Path, metavar="SRC", help="input files, or folders to search"
    )
    sub.add_argument(
        "--out", type=Path, required=True, help="trace root to write (for mpg run --traces)"
    )
    getattr(arguments, ADAPTERS[fmt].arguments)(sub)


def add_import_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> None:
    """A sub-command per format; the options of the one `argv` (the words after `import`) names,
    or of every format where `argv` is None."""
    formats = {
        fmt: (adapter.help, adapter.help, partial(_declare, fmt))
        for fmt, adapter in ADAPTERS.items()
    }
    add_subcommands(parser, "format", "FORMAT", formats, argv)


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
    if args.out.exists() and not args.out.is_dir():
        raise TraceRootError(f"--out {args.out} is a file, not a folder")
    files = input_files(args.src, ADAPTERS[args.format].patterns)
    adapter = _adapter(args.format)
    from mpg import progress
    from mpg.adapters.write import format_summary, write_conversion

    with progress.reporting("import"):
        with progress.phase("convert") as step:
            conversion = adapter.convert(files, args)
            step.done(conversion.read)
        with progress.phase("write") as step:
            summary = write_conversion(args.out, args.format, conversion)
            step.done(summary.converted + summary.quarantined)
        progress.summary(summary.read)
    print(format_summary(summary, args.out))
    if summary.records and "scheduler" not in summary.records and not _has_scheduler(args.out):
        print(
            f"mpg: warning: no scheduler events were written and {args.out / 'scheduler'} has "
            "none: mpg run will quarantine every record of these jobs as `unknown job`; add "
            "the jobs' scheduler trace there, or import again with --chips and "
            "--chip-generation to synthesize it",
            file=sys.stderr,
        )
    return 0


def _has_scheduler(root: Path) -> bool:
    """Whether the trace root holds any scheduler trace file (the jobs may be there)."""
    folder = root / "scheduler"
    return folder.is_dir() and any(
        p.name.endswith((".jsonl", ".jsonl.gz")) for p in folder.rglob("*")
    )
