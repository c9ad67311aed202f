"""A snapshot's tables in DuckDB: copied into `mpg.duckdb`, or as views for a reader.

Both start from the snapshot's list of data files (DATA_FILES): DuckDB reads local Parquet itself
and object storage through a `pyarrow.dataset` on the store's filesystem (DuckDB's own httpfs
extension cannot be installed offline). Then come the same `*_current` views, macros and
analysts' views (`mpg.output.views`), so a query means the same thing wherever it runs.

`mpg.duckdb` is a new file per run, never the published one opened for writing: DuckDB locks a
file while a writer has it open, and analysts keep theirs open. It is written in DuckDB 1.0's
storage format so that shells and BI tools behind the library can open it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from sqlglot import exp

from mpg.core.errors import StoreError
from mpg.definitions.metrics import METRIC_VERSIONS
from mpg.output.store import OutputStore
from mpg.output.views import create_views
from mpg.schemas import PUBLISHED, TABLE_KEYS
from mpg.schemas.ddl import create_table_sql
from mpg.sql.bigquery_dialect import CURRENT_VERSION_VIEW
from mpg.sql.files import create_macros, load_sql, render_sql

# The oldest DuckDB that can open `mpg.duckdb`: analysts' CLIs and BI tools lag the library.
READABLE_BY = "v1.0.0"


def current_view_statements(
    version: str, dialect: str, table: Callable[[str], exp.Table] = exp.to_table
) -> list[str]:
    """One `<table>_current` view per metric-versioned table (sql/publish/current_views.sql),
    and the `current_metric_version` view naming it (sql/publish/current_version.sql), for
    `dialect`, with tables named by `table`.

    `version` goes into the view as a literal (no engine binds a parameter in a view), placed
    by sqlglot in the parsed statement, never by formatting text; and it must be a name of
    METRIC_VERSIONS (code, not input): anything else is a bug in the caller.
    """
    if version not in METRIC_VERSIONS:
        raise ValueError(f"not a metric version: {version!r}")
    literals = {"current_version": version}
    return [
        *(
            render_sql(
                "publish/current_views.sql",
                dialect,
                tables={
                    "versioned_table": table(name),
                    "versioned_table_current": table(f"{name}_current"),
                },
                literals=literals,
            )
            for name, schema in PUBLISHED.items()
            if "metric_version" in schema.names
        ),
        render_sql(
            "publish/current_version.sql",
            dialect,
            tables={CURRENT_VERSION_VIEW: table(CURRENT_VERSION_VIEW)},
            literals=literals,
        ),
    ]


def table_files(files: pa.Table, table: str) -> list[str]:
    """A table's data files in a DATA_FILES table, in a stable order."""
    rows = files.filter(pc.equal(files.column("table"), table))
    return sorted(rows.column("path").to_pylist())


def _relation(
    con: duckdb.DuckDBPyConnection, store: OutputStore, paths: list[str], table: str
) -> duckdb.DuckDBPyRelation:
    schema = PUBLISHED[table]
    if not paths:
        return con.from_arrow(schema.empty_table())
    full = [store.storage.full(p) for p in paths]
    if not store.remote:
        return con.from_parquet(full)
    return con.from_arrow(ds.dataset(full, schema=schema, filesystem=store.storage.fs))


@contextlib.contextmanager
def writes(path: str) -> Iterator[None]:
    """DuckDB's I/O errors (a full disk) inside the block, as errors naming the file written."""
    try:
        yield
    except duckdb.IOException as exc:
        raise StoreError(f"cannot write {path}: {exc}") from exc


def new_database(path: str, current_version: str) -> duckdb.DuckDBPyConnection:
    """A new local database file holding every published table, empty, and the macros and views
    over them: all of a run's database that does not depend on its rows. Binding the views takes
    0.17 s whatever the data, so `mpg run` makes this while its pipeline works."""
    with writes(path):
        con = duckdb.connect(path, config={"storage_compatibility_version": READABLE_BY})
        try:
            # One thread: floating-point sums add up in one order, so the same input gives the
            # same bits on every run. The tables here are small (job-days).
            con.execute("SET threads = 1")
            for table, schema in PUBLISHED.items():
                con.execute(create_table_sql(table, schema))
            add_views(con, current_version)
        except BaseException:
            con.close()
            raise
    return con


def fill_tables(
    con: duckdb.DuckDBPyConnection, store: OutputStore, files: pa.Table, tables: list[str]
) -> None:
    """Insert the rows of `tables` (made by `new_database`) from their data files, in key order
    (the same input gives the same tables): two tables at once, each half of them from a thread
    of its own on a cursor of its own. Each insert is one statement on one thread (the database's
    one thread, as each thread's statement runs where it is called), so the rows and their sums
    are as filled one after another; most of each is opening and planning over a few small
    files, which leaves a core idle: 0.09-0.18 s instead of 0.26 s at 2M spans."""
    with con.cursor() as first, con.cursor() as second, ThreadPoolExecutor(2, "mpg-fill") as pool:
        halves = [
            pool.submit(_fill, c, store, files, tables[i::2]) for i, c in enumerate((first, second))
        ]
        for half in halves:
            half.result()


def _fill(
    con: duckdb.DuckDBPyConnection, store: OutputStore, files: pa.Table, tables: list[str]
) -> None:
    for table in tables:
        rows = _relation(con, store, table_files(files, table), table)
        try:
            rows = rows.select(*[f'"{c}"' for c in PUBLISHED[table].names])
            if table in TABLE_KEYS:
                # NULLS FIRST: a slice's "all" rows before its values, as the SQL orders them.
                rows = rows.order(", ".join(f'"{c}" NULLS FIRST' for c in TABLE_KEYS[table]))
            rows.insert_into(table)
        except (duckdb.InvalidInputException, duckdb.IOException) as exc:
            raise StoreError(f"a data file of {table} cannot be read: {exc}") from exc


def add_views(con: duckdb.DuckDBPyConnection, current_version: str) -> None:
    """The semantic layer's macros, the `*_current` views and the analysts' views."""
    create_macros(con)
    for statement in current_view_statements(current_version, "duckdb"):
        con.execute(statement)
    create_views(con)


def view_tables(con: duckdb.DuckDBPyConnection, store: OutputStore, files: pa.Table) -> None:
    """Every published table as a view over its data files (nothing copied): how a reader of a
    folder on object storage, or of a snapshot without its database file, sees it."""
    for table in PUBLISHED:
        rows = _relation(con, store, table_files(files, table), table)
        rows.select(*[f'"{c}"' for c in PUBLISHED[table].names]).create_view(table)


def read_summary(con: duckdb.DuckDBPyConnection) -> tuple[pa.Table, pa.Table, pa.Table]:
    """What a run prints when it ends: the scorecard of the last days published
    (sql/report/run_summary.sql), the fleet and each chip generation per day
    (sql/report/headline.sql, `mpg run --summary days`) and the record counts."""
    scorecard = con.sql(load_sql("report/run_summary.sql")).to_arrow_table()
    days = con.sql(load_sql("report/headline.sql")).to_arrow_table()
    return scorecard, days, con.table("record_counts").order("source").to_arrow_table()
