"""Given tables for the SQL under sql/: small hand-made rows in an in-memory DuckDB, each table
made by the DDL a run makes it with (`mpg.schemas.ddl`), so NOT NULL and types hold as in a
published database; and the parts of rows the tests write again and again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import duckdb
import pyarrow as pa

from mpg.schemas import PUBLISHED
from mpg.schemas.ddl import create_table_sql
from mpg.sql.files import MACRO_FILES, load_sql, macro_sql

# The semantic layer as every reader has it: its macros, in order, and the view of job size
# classes that mpg_job_days joins (a statement with no input, so created here like a macro).
SEMANTIC_LAYER: tuple[str, ...] = ("views/job_size_classes.sql", *MACRO_FILES)


def database(
    tables: Mapping[str, Sequence[Mapping[str, object]]], macros: Sequence[str] = ()
) -> duckdb.DuckDBPyConnection:
    """A connection holding every published table, those named in `tables` with those rows (a
    column not given is NULL) and the others empty, then the statements of `macros` (names under
    sql/: macro files, or `SEMANTIC_LAYER`) run on them (DuckDB binds a table macro's tables when
    it creates the macro)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for name, schema in PUBLISHED.items():
        con.execute(create_table_sql(name, schema))
    for name, rows in tables.items():
        given = pa.Table.from_pylist(list(rows), schema=PUBLISHED[name])
        con.register("given", given)
        con.execute(f'insert into "{name}" select * from given')
        con.unregister("given")
    for name in macros:
        con.execute(macro_sql(name))
    return con


def rows(con: duckdb.DuckDBPyConnection, name: str, **params: object) -> list[tuple]:
    """What statement `name` (under sql/) gives, bound to `params`, row by row."""
    return con.sql(load_sql(name), params=params or None).fetchall()


def columns(con: duckdb.DuckDBPyConnection, name: str, **params: object) -> list[str]:
    return con.sql(load_sql(name), params=params or None).columns


def records(con: duckdb.DuckDBPyConnection, name: str, **params: object) -> list[dict]:
    """What statement `name` gives, as one dict a row."""
    return con.sql(load_sql(name), params=params or None).to_arrow_table().to_pylist()


def row(table: str, values: Mapping[str, object]) -> dict:
    """A row of a published table as it reads back: every column, NULL where not given."""
    return {**dict.fromkeys(PUBLISHED[table].names), **values}


def sums(wanted: float, all_allocated: float, productive: float, ideal: float | None) -> dict:
    """The four chip-time sums of a job-day or slice row."""
    return {
        "wanted_chip_s": wanted,
        "all_allocated_chip_s": all_allocated,
        "productive_chip_s": productive,
        "ideal_chip_s": ideal,
    }


def ledger(day: date, job: str, category: str, chip_s: float, version: str = "v1") -> dict:
    """A chip_time_ledger row."""
    return {
        "day": day,
        "job_id": job,
        "metric_version": version,
        "category": category,
        "chip_s": chip_s,
    }


def cost(
    day: date, job: str, category: str, chip_s: float, generation: str, price: float | None,
    version: str = "v1",
) -> dict:  # fmt: skip
    """A chip_time_cost row as a run prices a ledger row: its chip-hours x the price of the
    job's generation (dollars a chip-hour; NULL without one)."""
    return {
        **ledger(day, job, category, chip_s, version),
        "chip_generation": generation,
        "usd": None if price is None else chip_s / 3600 * price,
        "usd_per_chip_hour": price,
        "pue": 1.0,
    }
