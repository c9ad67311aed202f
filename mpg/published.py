"""Opening what `mpg run --out DIR` published, for the commands that read it (explain, sql,
compare, report).

`DIR/mpg.duckdb` is opened read-only: a published snapshot never changes, and a reader never
locks out a run (docs/operations.md). Every reader meets the same two failures the same way: a
folder with no database is one line saying to run `mpg run`, and a damaged file is DuckDB's first
line of error naming the file (the rest of DuckDB's message is an excerpt of the query).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from mpg.errors import StoreError, UserError
from mpg.pipelines.layout import DATABASE
from mpg.sqlfiles import load_sql


class NoPublishedTablesError(UserError):
    """The output folder has no mpg.duckdb: `mpg run` has not published there."""


def published_database(out: Path) -> Path:
    """`out`'s mpg.duckdb, which must exist."""
    database = out / DATABASE
    if not database.is_file():
        raise NoPublishedTablesError(f"no published tables in {out}: run mpg run first")
    return database


def duckdb_reason(exc: duckdb.Error) -> str:
    """The first line of a DuckDB error: what went wrong, without the query excerpt after it."""
    return str(exc).strip().splitlines()[0]


@contextmanager
def reading(what: Path) -> Iterator[None]:
    """DuckDB's errors while reading `what` as one StoreError naming it."""
    try:
        yield
    except duckdb.Error as exc:
        raise StoreError(f"cannot read {what}: {duckdb_reason(exc)}") from exc


@contextmanager
def open_published(out: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to `out`'s published tables, with the goodput macros
    (sql/publish/macros.sql) that readers' queries call; DuckDB's errors become StoreError."""
    database = published_database(out)
    with reading(database), duckdb.connect(str(database), read_only=True) as con:
        con.execute(load_sql("publish/macros.sql"))
        yield con
