"""The `mpg sql` subcommand: ad-hoc SQL on a run's `mpg.duckdb`, with the views of sql/views/.

    mpg sql --out out "select * from worst_jobs limit 10"    a table in the terminal
    mpg sql --out out --csv "select * from fleet_mpg_by_day"  CSV (or --json) for scripts
    mpg sql --out out                                          DuckDB's own shell on the file

The database is opened read-only: a published snapshot never changes, and a reader never locks
out a run (docs/operations.md). A query that fails (a typo, a missing column, a write) is one
line and exit 2. The interactive shell is DuckDB's `duckdb` command (the duckdb-cli package),
started with `-readonly` in place of this process; without it, one line says how to get it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from mpg.arguments import add_out_argument
from mpg.errors import OptionsError, UserError

if TYPE_CHECKING:  # DuckDB and rich are imported to run a query and print it, not for --help
    from rich.text import Text

# Significant digits of a DOUBLE in the terminal table, as the spec's worked examples give
# ratios; --csv and --json print every digit.
_DIGITS = 12
_UNBOUNDED = 1_000_000  # columns, to measure a table's natural width
_NUMBERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "FLOAT", "DOUBLE", "DECIMAL")


class QueryError(UserError):
    """A query DuckDB refused: a syntax error, an unknown name, a write to the read-only file."""


class ShellMissingError(UserError):
    """No `duckdb` command for the interactive shell."""


def add_sql_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query", nargs="?", help="SQL to run (without it: an interactive DuckDB shell)"
    )
    add_out_argument(parser)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="print CSV (an empty cell is NULL)")
    output.add_argument("--json", action="store_true", help="print a JSON list of objects")


def sql_command(args: argparse.Namespace) -> int:
    from mpg.published import published_database

    database = published_database(args.out)
    if args.query is None:
        if args.csv or args.json:
            raise OptionsError("--csv and --json print a query's rows: give a query")
        _exec_shell(database)
    columns, types, rows = run_query(database, args.query)
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(["" if v is None else v for v in row] for row in rows)
    elif args.json:
        print(json.dumps([dict(zip(columns, row, strict=True)) for row in rows], default=str))
    else:
        _print_table(columns, types, rows)
    return 0


def run_query(database: Path, query: str) -> tuple[list[str], list[str], list[tuple]]:
    """Column names, DuckDB type names and rows of `query` on `database`, opened read-only;
    no columns for a statement that returns no rows."""
    import duckdb

    from mpg.published import duckdb_reason

    try:
        with duckdb.connect(str(database), read_only=True) as con:
            result = con.sql(query)
            if result is None:
                return [], [], []
            return result.columns, [str(t) for t in result.types], result.fetchall()
    except duckdb.Error as exc:
        raise QueryError(f"query failed on {database}: {duckdb_reason(exc)}") from exc


def _cell(value: object) -> Text:
    """A value as text: strings from logs enter rich as `Text`, never as markup."""
    from rich.text import Text

    if value is None:
        return Text("NULL", style="dim")
    if isinstance(value, float):
        return Text(f"{value:.{_DIGITS}g}")
    return Text(str(value))


def _print_table(columns: Sequence[str], types: Sequence[str], rows: Sequence[tuple]) -> None:
    """The rows as a rich table at its natural width: no value is cut or folded (a number cut
    short reads as another number); wide results are for --csv or fewer columns."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if not columns:
        return
    table = Table(
        box=box.SIMPLE_HEAD,
        caption_justify="left",
        caption=f"{len(rows)} row{'s' * (len(rows) != 1)}",
    )
    for name, type_ in zip(columns, types, strict=True):
        number = type_.split("(")[0] in _NUMBERS
        table.add_column(Text(name), justify="right" if number else "left", no_wrap=True)
    for row in rows:
        table.add_row(*map(_cell, row))
    console = Console(highlight=False)
    natural = console.measure(table, options=console.options.update_width(_UNBOUNDED)).maximum
    console.width = max(console.width, natural)
    console.print(table)


def duckdb_shell() -> str | None:
    """The `duckdb` command: the one installed beside this Python (duckdb-cli), else the PATH's."""
    beside = Path(sys.executable).with_name("duckdb")
    return str(beside) if beside.is_file() else shutil.which("duckdb")


def _exec_shell(database: Path) -> NoReturn:
    shell = duckdb_shell()
    if shell is None:
        raise ShellMissingError(
            "the interactive shell is DuckDB's `duckdb` command, which is not installed: "
            'pip install duckdb-cli, or pass a query (mpg sql "SELECT ...")'
        )
    sys.stdout.flush()
    os.execv(shell, [shell, "-readonly", str(database)])
