"""The `mpg` command line: what a user types and what the terminal shows.

- `command`: the subcommands (`COMMANDS`, where each one's options and code live), `run`,
  `backfill` and `simulate`, and `main`;
- `arguments`: options several commands share, declared once;
- `sql_command`: `mpg sql`;
- `progress`: progress bars or log lines on stderr, for every long command and the pipelines;
- `terminal`: tables in the terminal; `summary`: what `mpg run` prints when it ends.

The other commands live with what they compute (`mpg.adapters.command`, `mpg.compare.command`,
`mpg.explain.command`, `mpg.report.command`). Importing this package imports only the standard
library: `mpg --help` answers as fast as Python starts (tests/e2e/test_startup.py).
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Sequence
from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    """The `mpg` command, for a caller in the same process (tests, `bench/`): its exit status."""
    from mpg.cli.command import main as run_main

    return run_main(argv)


def script() -> NoReturn:
    """The `mpg` console script and `python -m mpg.cli`: `main`, then the process ends at once.

    Tearing the interpreter down after a run (freeing, object by object, every module that Beam,
    pyarrow, Polars and DuckDB loaded) took 0.6 s of a 10 s run over 2M spans, for nothing: by
    then every output file is written and closed. So the process ends the way a C program does,
    after what an orderly exit still owes: it runs the `atexit` hooks (logging's flush among
    them) and flushes stdout and stderr. It does not wait for other threads: mpg's own have ended
    when `main` returns, and Beam leaves idle pool threads behind that only the teardown would
    stop. An exception (a bug's traceback, Ctrl-C, argparse's own exit) takes the usual way out.
    """
    end(main())


def end(status: int) -> NoReturn:
    """End the process with `status` without tearing the interpreter down (`script`)."""
    atexit._run_exitfuncs()  # what the interpreter runs at exit, in its order
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away (`mpg ... | head`)
        status = status or 120  # what Python's own exit returns when stdout cannot be flushed
    os._exit(status)
