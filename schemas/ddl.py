"""DuckDB DDL generated from the pyarrow schemas, so that NOT NULL survives.

DuckDB's `CREATE TABLE AS` from Arrow drops NOT NULL constraints; generating the DDL keeps the
contract (see ../docs/tables.md) enforced by the database itself.

    >>> from mpg.schemas import CHIP_TIME_LEDGER
    >>> create_table_sql("chip_time_ledger", CHIP_TIME_LEDGER).split(", ")[:2]
    ['CREATE TABLE "chip_time_ledger" ("day" DATE NOT NULL', '"job_id" VARCHAR NOT NULL']
"""

from __future__ import annotations

import pyarrow as pa

_DUCKDB_TYPES: dict[pa.DataType, str] = {
    pa.string(): "VARCHAR",
    pa.int64(): "BIGINT",
    pa.int32(): "INTEGER",
    pa.float64(): "DOUBLE",
    pa.date32(): "DATE",
    pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    pa.bool_(): "BOOLEAN",
}


def _quote(identifier: str) -> str:
    # Identifiers come from our own schemas, never from input data; quoting keeps reserved words
    # such as "end" usable as column names.
    return '"' + identifier.replace('"', '""') + '"'


def duckdb_type(type_: pa.DataType) -> str:
    if pa.types.is_list(type_):
        return f"{duckdb_type(type_.value_type)}[]"
    if pa.types.is_struct(type_):
        fields = ", ".join(f"{_quote(f.name)} {duckdb_type(f.type)}" for f in type_)
        return f"STRUCT({fields})"
    try:
        return _DUCKDB_TYPES[type_]
    except KeyError:
        raise TypeError(f"no DuckDB type declared for Arrow type {type_}") from None


def create_table_sql(name: str, schema: pa.Schema) -> str:
    columns = ", ".join(
        f"{_quote(f.name)} {duckdb_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in schema
    )
    return f"CREATE TABLE {_quote(name)} ({columns})"
