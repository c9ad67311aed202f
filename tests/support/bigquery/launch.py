"""Start bqemulator offline: `python launch.py start --rest-port P ...` with the emulator's venv.

At start bqemulator installs DuckDB's spatial extension (for GEOGRAPHY) and fails without the
network; this launcher loads it if it is already there and otherwise goes on without it (no
GEOGRAPHY, which mpg does not use). Runs in the emulator's own venv, never the project's.

It also spares sqlglot's BigQuery parser a quadratic cost: for every SELECT with joins,
`Parser._implicit_unnests_to_explicit` copies the FROM source and each joined source whole (to
normalize their names) before it looks for `FROM t, t.array_column` joins to turn into UNNESTs.
The emulator inlines views into the statements that read them and parses each statement again in
every rewriting pass, so the analysts' views (views of views, each source a subquery) were copied
at every level: 40% of the emulator's time creating them. The function changes nothing unless a
join is a dotted table without ON; other statements skip it, and parse to the same tree.
"""

from __future__ import annotations

import contextlib

from bqemulator.cli import main
from bqemulator.storage.engine import DuckDBEngine
from sqlglot import exp
from sqlglot.parser import Parser


def _load_spatial_if_present(self: DuckDBEngine) -> None:
    with contextlib.suppress(Exception):  # duckdb's errors: the extension is not installed
        self._connection.execute("LOAD spatial")


DuckDBEngine._load_spatial = _load_spatial_if_present

_implicit_unnests_to_explicit = Parser._implicit_unnests_to_explicit


def _unnests_only_where_they_can_be(self: Parser, this: exp.Expr) -> exp.Expr:
    joins = this.args.get("joins") or []
    if any(_maybe_implicit_unnest(join) for join in joins):
        return _implicit_unnests_to_explicit(self, this)
    return this


def _maybe_implicit_unnest(join: exp.Join) -> bool:
    """The only joins sqlglot may turn into an UNNEST: a table of several parts, without ON."""
    table = join.this
    return isinstance(table, exp.Table) and not join.args.get("on") and len(table.parts) > 1


Parser._implicit_unnests_to_explicit = _unnests_only_where_they_can_be

if __name__ == "__main__":
    main()
