"""The analysts' views (sql/views/*.sql), created in `mpg.duckdb` over the `*_current` views.

Each file is one `CREATE OR REPLACE VIEW` named after the file; `VIEWS` lists them in the order
they build on one another. The views keep working in any DuckDB that opens the file (the `duckdb`
shell of an analyst, `mpg sql`): a view is stored as its SQL and bound again by the reader, so the
macros it calls (`mpg_ratio`, `mpg_goodput_ratios`, `mpg_profiled`, `mpg_profiled_sum`) are
stored in the database too, as persistent copies of the temporary ones in
sql/publish/macros.sql, their one definition.

    >>> persistent_macro_statements()[0]
    'CREATE OR REPLACE MACRO mpg_ratio(numerator, denominator) AS CASE WHEN denominator > 0 THEN numerator / denominator END'
"""  # noqa: E501

from __future__ import annotations

import duckdb
import sqlglot
from sqlglot import exp

from mpg.sqlfiles import load_sql, sql_text

# In dependency order: a view comes after those it reads (docs/views.md describes each).
VIEWS: tuple[str, ...] = (
    "job_size_classes",
    "job_days_sized",
    "fleet_mpg_by_day",
    "goodput_by_size_class",
    "ledger_by_slice",
    "job_lifetime",
    "worst_jobs",
)


def persistent_macro_statements() -> list[str]:
    """sql/publish/macros.sql without TEMPORARY, so the macros are stored with the views that
    call them; changed in the parsed statements (sqlglot), not by editing text."""
    statements = []
    for statement in sqlglot.parse(load_sql("publish/macros.sql"), read="duckdb"):
        assert statement is not None
        for temporary in list(statement.find_all(exp.TemporaryProperty)):
            temporary.pop()
        statements.append(sql_text(statement, "duckdb"))
    return statements


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """The macros and every view of `VIEWS`; the `*_current` views must exist already."""
    for statement in persistent_macro_statements():
        con.execute(statement)
    for name in VIEWS:
        con.execute(load_sql(f"views/{name}.sql"))
