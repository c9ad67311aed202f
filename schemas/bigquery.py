"""BigQuery table schemas and layouts derived from the pyarrow schemas, never restated.

The type mapping lives here once, beside the DuckDB one (`mpg.schemas.ddl`). A table with a `day`
column is partitioned by it (DAY) and clustered by the slice columns it has, or else by the rest
of its key: partition pruning and clustering then serve the usual filters (a day range, a
workload class, a job) without scanning the whole table.

    >>> from mpg.schemas import JOB_DAY_GOODPUT, RUNS
    >>> [(f.name, f.field_type, f.mode) for f in bigquery_schema(JOB_DAY_GOODPUT)][:2]
    [('day', 'DATE', 'REQUIRED'), ('job_id', 'STRING', 'REQUIRED')]
    >>> [(f.name, f.field_type, f.mode) for f in bigquery_schema(RUNS)][-3:-1]
    [('metric_versions', 'STRING', 'REPEATED'), ('counts', 'RECORD', 'REPEATED')]
    >>> table_layout("chip_time_ledger")
    TableLayout(partition_by='day', cluster_by=('job_id', 'metric_version', 'category'))
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from google.cloud.bigquery import SchemaField

from mpg.schemas import PUBLISHED, TABLE_KEYS

_BIGQUERY_TYPES: dict[pa.DataType, str] = {
    pa.string(): "STRING",
    pa.int64(): "INT64",
    pa.int32(): "INT64",
    pa.float64(): "FLOAT64",
    pa.date32(): "DATE",
    pa.timestamp("us", tz="UTC"): "TIMESTAMP",
    pa.bool_(): "BOOL",
}

# Every table mpg publishes, as in the DuckDB file (docs/tables.md), in the order they are written.
BIGQUERY_TABLES: dict[str, pa.Schema] = PUBLISHED

# The column every day-partitioned table is partitioned by (a UTC DATE).
DAY = "day"
# The columns users slice goodput by; a day-partitioned table that has them is clustered by them.
SLICE_COLUMNS = ("workload_class", "framework", "chip_generation")
# BigQuery allows at most four clustering columns.
_MAX_CLUSTER_COLUMNS = 4


def bigquery_field(field: pa.Field) -> SchemaField:
    """One column: a list becomes REPEATED (its items are never NULL here), a struct a RECORD."""
    if pa.types.is_list(field.type):
        item = bigquery_field(pa.field(field.name, field.type.value_type, nullable=False))
        return SchemaField(field.name, item.field_type, mode="REPEATED", fields=item.fields)
    mode = "NULLABLE" if field.nullable else "REQUIRED"
    if pa.types.is_struct(field.type):
        return SchemaField(field.name, "RECORD", mode=mode, fields=bigquery_schema(field.type))
    try:
        return SchemaField(field.name, _BIGQUERY_TYPES[field.type], mode=mode)
    except KeyError:
        raise TypeError(f"no BigQuery type declared for Arrow type {field.type}") from None


def bigquery_schema(fields: pa.Schema | pa.StructType) -> list[SchemaField]:
    return [bigquery_field(f) for f in fields]


@dataclass(frozen=True)
class TableLayout:
    partition_by: str | None
    cluster_by: tuple[str, ...]


def table_layout(name: str) -> TableLayout:
    """How table `name` is stored: tables without a `day` are small and replaced whole, so they
    are neither partitioned nor clustered."""
    columns = BIGQUERY_TABLES[name].names
    if DAY not in columns:
        return TableLayout(partition_by=None, cluster_by=())
    slices = tuple(c for c in SLICE_COLUMNS if c in columns)
    rest_of_key = tuple(c for c in TABLE_KEYS.get(name, ()) if c != DAY)
    return TableLayout(partition_by=DAY, cluster_by=(slices or rest_of_key)[:_MAX_CLUSTER_COLUMNS])
