"""The `mpg sql` subcommand: ad-hoc SQL on the published tables, with the views of sql/views/.

    mpg sql --out out "select * from worst_jobs limit 10"    a table in the terminal
    mpg sql --out out --csv "select * from fleet_mpg_by_day"  CSV (or --json) for scripts
    mpg sql --out gs://bucket/mpg --json "select ..."         a folder on object storage
    mpg sql --out out                                          DuckDB's own shell on mpg.duckdb

The current snapshot is read as `mpg.output.published.open_published` opens it (a local folder's
`mpg.duckdb` read-only, object storage through views over the data files): a published snapshot
never changes, and a reader never locks out a run (docs/operations.md). Only queries run: a
statement that would write is refused, like one that fails (a typo, a missing column), in one
line with exit 2. The interactive shell is DuckDB's `duckdb` command (the duckdb-cli package),
started with `-readonly` on a local folder's `mpg.duckdb` in place of this process.
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

from mpg.cli.arguments import add_out_argument
from mpg.core.errors import OptionsError, UserError
from mpg.output.pointer import require_published

if TYPE_CHECKING:  # DuckDB and rich are imported to run a query and print it, not for --help
    import duckdb
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
    require_published(args.out)  # no tables: one line, before DuckDB runs anything
    if args.query is None:
        if args.csv or args.json:
            raise OptionsError("--csv and --json print a query's rows: give a query")
        _exec_shell(_shell_database(args.out))
    columns, types, rows = run_query(args.out, args.query)
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(["" if v is None else v for v in row] for row in rows)
    elif args.json:
        print(json.dumps([dict(zip(columns, row, strict=True)) for row in rows], default=str))
    else:
        _print_table(columns, types, rows)
    return 0


# What a query may be: it reads. (A local mpg.duckdb is opened read-only anyway; views over
# object storage live in a connection of this process, which a write would quietly change.)
_READING = {"SELECT", "EXPLAIN", "PRAGMA", "SET"}


def _check_reads(con: duckdb.DuckDBPyConnection, query: str, where: str) -> None:
    """A QueryError unless every statement of `query` only reads."""
    for statement in con.extract_statements(query):
        kind = statement.type.name
        if kind not in _READING:
            raise QueryError(
                f"query failed on {where}: only queries run here, not {kind} statements"
            )


def run_query(out: str | Path, query: str) -> tuple[list[str], list[str], list[tuple]]:
    """Column names, DuckDB type names and rows of `query` on `out`'s published tables; no
    columns for a statement that returns no rows."""
    import duckdb

    from mpg.output.published import duckdb_reason, open_published, published_location

    where = published_location(out)
    with open_published(out) as con:
        try:
            _check_reads(con, query, where)
            result = con.sql(query)
            if result is None:
                return [], [], []
            return result.columns, [str(t) for t in result.types], result.fetchall()
        except duckdb.Error as exc:
            raise QueryError(f"query failed on {where}: {duckdb_reason(exc)}") from exc


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


def _shell_database(out: str | Path) -> str:
    """A local folder's current database file, for DuckDB's shell."""
    from mpg.output.published import published_location

    where = published_location(out)
    if not Path(where).is_file():
        raise OptionsError(
            f"DuckDB's shell opens a local folder's mpg.duckdb; {out} has none: pass a query "
            '(mpg sql --out ... "SELECT ...")'
        )
    return where


def _exec_shell(database: str) -> NoReturn:
    shell = duckdb_shell()
    if shell is None:
        raise ShellMissingError(
            "the interactive shell is DuckDB's `duckdb` command, which is not installed: "
            'pip install duckdb-cli, or pass a query (mpg sql "SELECT ...")'
        )
    sys.stdout.flush()
    os.execv(shell, [shell, "-readonly", str(database)])
