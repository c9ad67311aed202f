"""Tables and views an analyst created in `mpg.duckdb`, kept across runs.

Each run builds `mpg.duckdb` anew and renames it over the last one, so anything an analyst
created there (`create table my_jobs as ...` in a `duckdb` shell) would vanish at the next run
without a word. The run instead copies every table and view of the previous file's `main` schema
that mpg does not publish into the new file, and says which it kept and which it could not:

- a table keeps its rows as they were (its own data: mpg does not recompute it);
- a view is created again from its SQL, over the new tables; one that no longer binds (it names
  a column a metric version dropped, say) is reported, not fatal;
- macros, sequences and other schemas are not carried (docs/tables.md says so).

Only local output folders have the file: on object storage `mpg.duckdb` is not published.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from mpg.schemas import PUBLISHED

_OBJECTS = (
    "select 'table' as kind, table_name as name, null as sql from duckdb_tables() "
    "where database_name = current_database() and schema_name = 'main' and not internal "
    "union all "
    "select 'view', view_name, sql from duckdb_views() "
    "where database_name = current_database() and schema_name = 'main' and not internal "
    "order by kind, name"
)


def _reason(exc: duckdb.Error) -> str:
    """DuckDB's message without the SQL it quotes after it."""
    return str(exc).strip().splitlines()[0]


@dataclass(frozen=True)
class Kept:
    """What a run carried over from the previous `mpg.duckdb`."""

    kept: tuple[str, ...] = ()  # names of the tables and views created again
    lost: tuple[str, ...] = ()  # "name: why" for each one that could not be


def keep_analyst_objects(con: duckdb.DuckDBPyConnection, previous: Path) -> Kept:
    """Copy into `con` (the new database, its tables and views made) the analyst's tables and
    views of the database file `previous`, if there is one."""
    if not previous.exists():
        return Kept()
    ours = {name for _, name, _ in con.sql(_OBJECTS).fetchall()} | set(PUBLISHED)
    try:
        old = duckdb.connect(str(previous), read_only=True)
    except duckdb.Error as exc:  # open for writing in an analyst's shell, or damaged
        return Kept(lost=(f"{previous.name}: not read ({_reason(exc)})",))
    with old:
        theirs = [row for row in old.sql(_OBJECTS).fetchall() if row[1] not in ours]
        kept, lost = [], []
        for kind, name, _ in theirs:
            if kind == "table":
                con.from_arrow(old.table(f'"{name}"').to_arrow_table()).create(f'"{name}"')
                kept.append(name)
    views = {name: sql for kind, name, sql in theirs if kind == "view"}
    # A view may read another: create them in rounds until a round creates none.
    while views:
        errors = {}
        for name, sql in views.items():
            try:
                con.execute(sql)
            except duckdb.Error as exc:
                errors[name] = _reason(exc)
            else:
                kept.append(name)
        if len(errors) == len(views):
            lost.extend(f"{name}: {reason}" for name, reason in errors.items())
            break
        views = {name: views[name] for name in errors}
    return Kept(tuple(sorted(kept)), tuple(sorted(lost)))
