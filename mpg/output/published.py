"""Opening what `mpg run --out DIR` published, for the commands that read it (explain, sql,
compare, report).

Every reader starts from `DIR/current.json`, the current snapshot (`mpg.output.snapshot`); whether
there is one at all is `mpg.output.pointer`'s cheaper first check.
A local folder has that snapshot as one DuckDB file, `DIR/mpg.duckdb`, opened read-only: a
published file never changes and a reader never locks out a run. A folder on object storage (or
a local one whose database file is behind its snapshot, or held by another process) is read as
DuckDB views over the snapshot's data files. Either way the connection has every published
table, the `*_current` views, the goodput macros and the analysts' views.

Every reader meets the same failures the same way: a folder never published to is one line
saying to run `mpg run`, and a damaged file is DuckDB's first line of error naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from mpg.core.errors import StoreError
from mpg.output.pointer import NoPublishedTablesError
from mpg.output.snapshot import read_current
from mpg.output.store import DATABASE, OutputStore
from mpg.schemas import DATA_FILES
from mpg.sql.files import create_macros


def duckdb_reason(exc: duckdb.Error) -> str:
    """The first line of a DuckDB error: what went wrong, without the query excerpt after it."""
    return str(exc).strip().splitlines()[0]


@contextmanager
def reading(what: str | Path) -> Iterator[None]:
    """DuckDB's errors while reading `what` as one StoreError naming it."""
    try:
        yield
    except duckdb.Error as exc:
        raise StoreError(f"cannot read {what}: {duckdb_reason(exc)}") from exc


def published_location(out: str | Path) -> str:
    """What a reader of `out` reads: its database file, or the folder itself on object storage
    (for messages)."""
    store = OutputStore(str(out))
    return store.uri if store.remote else store.storage.full(DATABASE)


def _database_snapshot(path: str) -> str | None:
    """The run whose snapshot a database file holds; None if it cannot be opened (held by a
    read-write session, say)."""
    try:
        with duckdb.connect(path, read_only=True) as con:
            rows = con.sql(
                "select run_id from runs where outcome = 'published' "
                "order by started_at desc limit 1"
            ).fetchall()
    except duckdb.Error:
        return None
    return rows[0][0] if rows else None


@contextmanager
def open_published(out: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to `out`'s current snapshot, with the semantic layer's macros
    (`mpg.sql.files.MACRO_FILES`) that readers' queries call, as this code defines them; DuckDB's
    errors become StoreError."""
    store = OutputStore(str(out))
    current, _ = read_current(store)
    if current is None:
        raise NoPublishedTablesError(out)
    database = store.storage.full(DATABASE)
    local = not store.remote and Path(database).is_file()
    if local and _database_snapshot(database) == current.run_id:
        with reading(database), duckdb.connect(database, read_only=True) as con:
            create_macros(con)
            yield con
        return
    # Views are built with sqlglot (~0.2 s to import): only a reader that needs them pays it.
    from mpg.output.database import add_views, view_tables

    files = store.read_parquet(current.state["files"], DATA_FILES)
    with reading(store.uri), duckdb.connect() as con:
        view_tables(con, store, files)
        add_views(con, current.key.current_metric_version)
        yield con
