"""The analysts' views (sql/views/*.sql), created in `mpg.duckdb` over the `*_current` views.

Each file is one `CREATE OR REPLACE VIEW` named after the file; `VIEWS` lists them in the order
they build on one another. The views keep working in any DuckDB that opens the file (the `duckdb`
shell of an analyst, `mpg sql`): a view is stored as its SQL and bound again by the reader, so the
macros it calls (the semantic layer's: `mpg_ratio`, `mpg_goodput_ratios`, ..., `mpg_job_days`,
`mpg_rollup`, `mpg_jobs`, `mpg_scorecard`; `mpg.sql.files.MACRO_FILES`) are stored in the
database too, as persistent copies of the temporary ones in their files, their one definition.

BigQuery gets the same views (`bigquery_view_statements`), transpiled by sqlglot from the same
files with the macros inlined and the DuckDB-only constructs rewritten (`mpg.sql.bigquery_dialect`), and
every table or view they read named with its project and dataset, as a BigQuery view must.

    >>> persistent_macro_statements()[0]
    'CREATE OR REPLACE MACRO mpg_ratio(numerator, denominator) AS CASE WHEN denominator > 0 THEN numerator / denominator END'
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache

import duckdb
import sqlglot
from sqlglot import exp

from mpg.sql.bigquery_dialect import CURRENT_VERSION_VIEW, FACTS_VIEW, for_bigquery
from mpg.sql.files import MACRO_FILES, load_sql, macro_sql, parse_sql, sql_text, substitute

# In dependency order: a view comes after those it reads (docs/views.md describes each).
VIEWS: tuple[str, ...] = (
    "job_size_classes",
    "job_day_facts",
    "job_days_sized",
    "fleet_mpg_by_day",
    "rollup_by_day",
    "goodput_by_size_class",
    "ledger_by_slice",
    "worst_jobs",
    "job_lifetime",
    "cost_by_slice",
    "slice_scorecard",
    "checkpoint_advice_by_slice",
    "chargeback_by_month",
    "queue_waiting",
)


@cache
def persistent_macro_statements() -> tuple[str, ...]:
    """The layer's macros (MACRO_FILES) without TEMPORARY, so the macros are stored with the
    views that call them; changed in the parsed statements (sqlglot), not by editing text.
    Made once per process (parsing them takes about 0.1 s: `mpg run` makes its database, and
    so them, in a thread while the pipeline works, `publish.database_ahead`)."""
    statements = []
    for name in MACRO_FILES:
        for statement in sqlglot.parse(macro_sql(name), read="duckdb"):
            assert statement is not None
            for temporary in list(statement.find_all(exp.TemporaryProperty)):
                temporary.pop()
            statements.append(sql_text(statement, "duckdb"))
    return tuple(statements)


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """The macros and every view of `VIEWS`; the `*_current` views must exist already."""
    for statement in persistent_macro_statements():
        con.execute(statement)
    for name in VIEWS:
        con.execute(load_sql(f"views/{name}.sql"))


def bigquery_view_statements(
    table: Callable[[str], exp.Table], published: Iterable[str]
) -> list[str]:
    """Every view of `VIEWS` as a BigQuery `CREATE OR REPLACE VIEW`, in order, its macros
    inlined (`mpg.sql.bigquery_dialect`) and each table or view it names (`published` tables, their
    `*_current` views, `current_metric_version` and the views of `VIEWS`) written as
    `table(name)`."""
    names = {*published, *(f"{t}_current" for t in published), CURRENT_VERSION_VIEW, *VIEWS}
    statements = []
    for name in VIEWS:
        inlined = for_bigquery(parse_sql(f"views/{name}.sql"), facts_view=name != FACTS_VIEW)
        ctes = {cte.alias for cte in inlined.find_all(exp.CTE)}
        if ctes & names:
            raise AssertionError(f"views/{name}.sql names a CTE as a table: {ctes & names}")
        named = substitute(inlined, {n: table(n) for n in names})
        statements.append(sql_text(named, "bigquery"))
    return statements
