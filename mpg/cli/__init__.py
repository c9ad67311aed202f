"""The `mpg` command line: what a user types and what the terminal shows.

- `command`: the subcommands (`COMMANDS`, where each one's options and code live), `run`,
  `backfill` and `simulate`, and `main`;
- `arguments`: options several commands share, declared once;
- `sql_command`: `mpg sql`;
- `progress`: progress bars or log lines on stderr, for every long command and the pipelines;
- `terminal`: tables in the terminal; `summary`: what `mpg run` prints when it ends.

The other commands live with what they compute (`mpg.adapters.command`, `mpg.compare.command`,
`mpg.explain.command`, `mpg.report.command`). Importing this package imports nothing: `mpg
--help` answers as fast as Python starts (tests/e2e/test_startup.py).
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The `mpg` console script (`mpg.cli:main`) and `python -m mpg.cli`."""
    from mpg.cli.command import main as run_main

    return run_main(argv)
