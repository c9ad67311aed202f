"""Loads SQL statements from the `sql/` folder (installed as `mpg.sql`), for DuckDB or BigQuery.

SQL lives only in files, one statement each (the `macros.sql` files and
`publish/current_views.sql` excepted), with named parameters bound at execution: nothing here
formats values into query text (the `*_current` views' version, which DuckDB cannot bind in a
view, is inlined by `mpg.output.database.current_view_statements`; the parse statements' field
lists, names and types from `mpg.schemas`, are filled in by `mpg.transforms.parse_sql`).

The pipeline's own SQL (`parse/`, `crosscheck/`, `quality/`, `explain/`) runs on DuckDB only, on
local Arrow and Parquet. What users read (`report/`, the `*_current` views) is written once in
DuckDB's dialect and transpiled by sqlglot for BigQuery (`render_sql`); `bigquery/` holds the few
statements that exist only there, in its dialect. Where an engine cannot bind a parameter (a view's
definition) or a name (a table), `render_sql` puts a literal or a table into the parsed statement,
quoted by sqlglot for the target dialect: still no string formatting.

    >>> "with" in load_sql("parse/runtime.sql")
    True
    >>> render_sql("report/headline.sql", "bigquery")[-87:]
    'SELECT * FROM final ORDER BY metric_version NULLS LAST, day NULLS LAST, chip_generation'
    >>> from sqlglot import exp
    >>> render_sql(
    ...     "publish/current_views.sql", "bigquery", literals={"current_version": "v1"},
    ...     tables={"versioned_table": exp.table_("t", db="d", catalog="p-1", quoted=True),
    ...             "versioned_table_current": exp.table_("t_current", quoted=True)},
    ... )
    "CREATE OR REPLACE VIEW `t_current` AS SELECT * FROM `p-1`.`d`.`t` WHERE metric_version = 'v1'"
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:  # sqlglot (~0.2 s to import) is needed only to transpile or rewrite a statement
    import pyarrow as pa
    from sqlglot import exp

# The dialect of every file under sql/ but those under sql/bigquery/.
_DIALECTS = {"bigquery": "bigquery"}
_DEFAULT_DIALECT = "duckdb"


# The semantic layer's macros, in the order they build on one another (docs/metrics.md): the
# scalar ones (every ratio, the main loss, exact sums), then the table macros every surface reads
# (the ledger's and the job-days' facts, their roll-ups, the ranked jobs, the scorecard, the
# advice's savings in dollars).
MACRO_FILES: tuple[str, ...] = (
    "publish/macros.sql",
    "semantic/ledger.sql",
    "semantic/job_days.sql",
    "semantic/sums.sql",
    "semantic/rollup.sql",
    "semantic/jobs.sql",
    "semantic/scorecard.sql",
    "semantic/advice.sql",
    "semantic/chargeback.sql",
    "semantic/queues.sql",
)


_ROLLUP = "semantic/rollup.sql"
_CUBE = re.compile(r"\bcube \(([^()]*)\)")


def macro_sql(name: str) -> str:
    """The statements of the layer's file `name` (one of MACRO_FILES) as a database is given
    them: the file, and after semantic/rollup.sql's `mpg_rollup` the `mpg_slice_rollup` derived
    from it (`_slice_rollup`)."""
    text = load_sql(name)
    return f"{text};\n{_slice_rollup(text)}" if name == _ROLLUP else text


@cache
def _slice_rollup(rollup: str) -> str:
    """mpg_slice_rollup: `mpg_rollup`'s text with its CUBE's grouping sets cut to the empty set
    and each of its columns alone: the fleet's and every one-column slice's rows (and the
    jobs', whose set the slice columns' GROUPING() needs), none of the crossed slices. The same
    text defines every figure of both; DuckDB plans the whole roll-up for about 0.035 s more,
    and the scorecard `mpg run` prints plans two (docs/decisions.md, "The scorecard's roll-up")."""
    cube = _CUBE.findall(rollup)
    if len(cube) != 1 or rollup.count(" mpg_rollup(") != 1:
        raise AssertionError(f"{_ROLLUP} no longer defines mpg_rollup with one CUBE")
    alone = ", ".join(["()", *(f"({c.strip()})" for c in cube[0].split(","))])
    return _CUBE.sub(alone, rollup).replace(" mpg_rollup(", " mpg_slice_rollup(")


def create_macros(con: duckdb.DuckDBPyConnection) -> None:
    """The layer's macros on `con`, as temporary macros: a reader's own code defines every
    figure it reads (they shadow those stored in a published file, which analysts' shells
    use)."""
    for name in MACRO_FILES:
        con.execute(macro_sql(name))


_local = threading.local()  # a connection per thread: a DuckDB connection is not shared safely


def _goodput_connection() -> duckdb.DuckDBPyConnection:
    """This thread's in-memory DuckDB on one thread (sums in one order), with the goodput
    macros (publish/macros.sql): made once per worker thread; a new database with the macros
    each time cost about 16 ms, more than a day's query."""
    con = getattr(_local, "con", None)
    if con is None:
        con = duckdb.connect(config={"threads": 1})
        con.execute(load_sql("publish/macros.sql"))
        _local.con = con
    return con


def run_goodput_sql(name: str, inputs: Mapping[str, pa.Table]) -> pa.Table:
    """The statement `sql/<name>` over Arrow tables in hand, each under its name in `inputs`,
    on this thread's in-memory DuckDB with the goodput macros: the SQL that runs per job bucket
    or per day (`job_day_ratios`, `goodput_by_slice`, `chip_time_cost`). The tables are
    unregistered after, whatever happens."""
    con = _goodput_connection()
    for table, rows in inputs.items():
        con.register(table, rows)
    try:
        return con.sql(load_sql(name)).to_arrow_table()
    finally:
        for table in inputs:
            con.unregister(table)


@cache
def load_sql(name: str) -> str:
    return resources.files("mpg.sql").joinpath(name).read_text(encoding="utf-8")


def _dialect_of(name: str) -> str:
    return _DIALECTS.get(name.split("/")[0], _DEFAULT_DIALECT)


def parse_sql(
    name: str,
    tables: Mapping[str, exp.Table] | None = None,
    literals: Mapping[str, str] | None = None,
) -> exp.Expression:
    """Statement `name`, parsed, with the tables named in `tables` replaced (keeping their
    aliases) and the parameters named in `literals` replaced by string literals."""
    import sqlglot

    statement = sqlglot.parse_one(load_sql(name), read=_dialect_of(name))
    return substitute(statement, tables or {}, literals or {})


def substitute(
    statement: exp.Expression,
    tables: Mapping[str, exp.Table],
    literals: Mapping[str, str] | None = None,
) -> exp.Expression:
    """`statement` with the tables named in `tables` replaced (keeping their aliases) and the
    parameters named in `literals` replaced by string literals."""
    from sqlglot import exp

    literals = literals or {}

    def put(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and not node.db and node.name in tables:
            table = tables[node.name].copy()
            table.set("alias", node.args.get("alias"))
            return table
        if isinstance(node, exp.Placeholder | exp.Parameter) and node.name in literals:
            return exp.Literal.string(literals[node.name])
        return node

    return statement.transform(put)


def render_sql(
    name: str,
    dialect: str,
    tables: Mapping[str, exp.Table] | None = None,
    literals: Mapping[str, str] | None = None,
) -> str:
    """Statement `name` in `dialect` on one line (`parse_sql` says what is substituted)."""
    return sql_text(parse_sql(name, tables, literals), dialect)


def sql_text(statement: exp.Expression, dialect: str) -> str:
    """A parsed statement as text for `dialect`, without comments: they stay in the file (a view
    would store them, and bqemulator counts a parameter named in a comment as one to bind)."""
    return statement.sql(dialect=dialect, comments=False)
