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
from typing import TYPE_CHECKING

from mpg.adapters import ADAPTERS, arguments
from mpg.cli.arguments import add_subcommands
from mpg.core.errors import TraceRootError
from mpg.core.locations import is_remote

if TYPE_CHECKING:
    from mpg.storage import Storage


def _adapter(fmt: str) -> ModuleType:
    return importlib.import_module(ADAPTERS[fmt].module)


def _declare(fmt: str, sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "src",
        nargs="+",
        metavar="SRC",
        help="input files, or folders to search (local, gs://, s3://)",
    )
    sub.add_argument(
        "--out", required=True, help="trace root to write, local, gs:// or s3:// (mpg run --traces)"
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


def import_command(args: argparse.Namespace) -> int:
    from mpg.adapters.inputs import input_files

    if not is_remote(args.out) and Path(args.out).exists() and not Path(args.out).is_dir():
        raise TraceRootError(f"--out {args.out} is a file, not a folder")
    files = input_files(args.src, ADAPTERS[args.format].patterns)
    adapter = _adapter(args.format)
    from mpg.storage import Storage

    out = Storage(args.out)
    from mpg.adapters.write import format_summary, under, write_conversion
    from mpg.cli import progress

    with progress.reporting("import"):
        with progress.phase("convert") as step:
            conversion = adapter.convert(files, args)
            step.done(conversion.read)
        with progress.phase("write") as step:
            summary = write_conversion(args.out, args.format, conversion)
            step.done(summary.converted + summary.quarantined)
        progress.summary(summary.read)
    print(format_summary(summary, args.out))
    if summary.records and "scheduler" not in summary.records and not _has_scheduler(out):
        scheduler = under(args.out, "scheduler")
        print(
            f"mpg: warning: no scheduler events were written and {scheduler} has "
            "none: mpg run will quarantine every record of these jobs as `unknown job`; add "
            "the jobs' scheduler trace there, or import again with --chips and "
            "--chip-generation to synthesize it",
            file=sys.stderr,
        )
    return 0


def _has_scheduler(root: Storage) -> bool:
    """Whether the trace root holds any scheduler trace file (the jobs may be there)."""
    return any(e.path.endswith((".jsonl", ".jsonl.gz")) for e in root.list("scheduler"))
