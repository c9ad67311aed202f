"""Publish a run's tables to BigQuery, beside the DuckDB snapshot (docs/bigquery.md).

    mpg run --traces T --out DIR --publish bigquery --project P --dataset D

Tables are created from the pyarrow schemas (`mpg.schemas.bigquery`) and written by load jobs
from the run's Parquet (Beam's `WriteToBigQuery` has no endpoint option and its file loads need
`gs://`). Every write replaces, so a rerun never duplicates:
- all days (`days=None`, what a full run publishes): each table is replaced whole by one
  WRITE_TRUNCATE load, atomic per table, and a day that disappeared disappears with it;
- some days (an incremental run): the rows of those days are loaded into a staging table and
  swapped in by one MERGE (`sql/bigquery/replace_days.sql`), which empties a listed day that now
  has no rows. Tables without a `day` are always replaced whole.
Then the `*_current` views select the current metric version, and the analysts' views of
sql/views/ are created over them (`mpg.output.views.bigquery_view_statements`: the same files
as in DuckDB, transpiled). Errors of BigQuery, the network or the credentials become one-line
`BigQueryError`s.
"""

from __future__ import annotations

import io
from collections.abc import Collection
from datetime import date

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import requests
from google.api_core.client_options import ClientOptions
from google.api_core.exceptions import GoogleAPIError
from google.api_core.retry import Retry
from google.auth.credentials import AnonymousCredentials
from google.auth.exceptions import GoogleAuthError
from google.cloud import bigquery
from sqlglot import exp

from mpg.core.errors import OptionsError
from mpg.definitions.metrics import METRIC_VERSIONS
from mpg.output.database import current_view_statements
from mpg.output.store import OutputStore
from mpg.output.views import bigquery_view_statements
from mpg.pipelines.bigquery_target import BigQueryError, BigQueryLoad, BigQueryTarget
from mpg.schemas.bigquery import BIGQUERY_TABLES, bigquery_schema, table_layout
from mpg.sql.files import parse_sql, sql_text

_STAGING_PREFIX = "_mpg_staged_"


def publish_bigquery(
    store: OutputStore,
    files: pa.Table,
    target: BigQueryTarget,
    days: Collection[date] | None,
    *,
    current_version: str,
) -> BigQueryLoad:
    """Publish a snapshot's tables (their data files: DATA_FILES) to `target`.

    `days=None` replaces every table whole; otherwise exactly `days` of the day-partitioned tables
    are replaced (a listed day without rows is emptied). The `*_current` views then select
    `current_version`. Idempotent: publishing the same tables again changes nothing.
    """
    if current_version not in METRIC_VERSIONS:
        raise OptionsError(f"unknown metric version {current_version!r} for the current views")
    try:
        client = _client(target)
        client.create_dataset(target.dataset_id, exists_ok=True, retry=_retry(target))
        loads = [
            _publish_table(client, target, name, _local_rows(store, files, name, days), days)
            for name in BIGQUERY_TABLES
        ]
        _create_views(client, target, current_version)
    except (GoogleAPIError, GoogleAuthError, requests.RequestException, TimeoutError) as exc:
        where = f" at {target.endpoint}" if target.endpoint else ""
        raise BigQueryError(
            f"publishing to BigQuery {target.dataset_id}{where} failed: {exc}"
        ) from exc
    return BigQueryLoad(
        dataset=target.dataset_id,
        tables=len(loads),
        partitions=sum(partitions for partitions, _ in loads),
        rows=sum(rows for _, rows in loads),
    )


def _client(target: BigQueryTarget) -> bigquery.Client:
    if target.endpoint is None:
        return bigquery.Client(project=target.project)
    return bigquery.Client(
        project=target.project,
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=target.endpoint),
    )


def _retry(target: BigQueryTarget) -> Retry:
    """The client's retry of transient errors (10 minutes by default), bounded by `retry_s`."""
    return bigquery.DEFAULT_RETRY.with_timeout(target.retry_s)


def _local_rows(
    store: OutputStore, files: pa.Table, name: str, days: Collection[date] | None
) -> tuple[pa.Table, int]:
    """Table `name`'s rows to publish (of `days` only, if it has days) and how many day
    partitions they came from, read from the snapshot's data files (DATA_FILES)."""
    schema = BIGQUERY_TABLES[name]
    rows = files.filter(pc.equal(files.column("table"), name)).to_pylist()
    if table_layout(name).partition_by is not None and days is not None:
        rows = [r for r in rows if r["day"] in days]
    paths = sorted(r["path"] for r in rows)
    partitions = len({r["day"] for r in rows}) if table_layout(name).partition_by else 0
    return store.read_parquets(paths, schema), partitions


def _publish_table(
    client: bigquery.Client,
    target: BigQueryTarget,
    name: str,
    local: tuple[pa.Table, int],
    days: Collection[date] | None,
) -> tuple[int, int]:
    """Write one table; returns (day partitions replaced, rows loaded)."""
    table = _ensure_table(client, target, name)
    rows, partitions = local
    if days is None or table_layout(name).partition_by is None:
        _load(client, target, rows, table)
        return partitions, rows.num_rows
    _replace_days(client, target, table, rows, days)
    return len(days), rows.num_rows


def _ensure_table(client: bigquery.Client, target: BigQueryTarget, name: str) -> bigquery.Table:
    """Table `name` as declared (created if missing). A table an older mpg made, whose columns
    are the first of those declared now, gains the nullable ones added since (BigQuery adds
    columns at the end, where mpg declares them); one with other columns stops the publish,
    since a load would silently replace its schema."""
    layout = table_layout(name)
    wanted = bigquery.Table(target.table(name), schema=bigquery_schema(BIGQUERY_TABLES[name]))
    if layout.partition_by is not None:
        wanted.time_partitioning = bigquery.TimePartitioning(
            type_=bigquery.TimePartitioningType.DAY, field=layout.partition_by
        )
    wanted.clustering_fields = list(layout.cluster_by) or None
    table = client.create_table(wanted, exists_ok=True, retry=_retry(target))
    names = [f.name for f in table.schema]
    added = wanted.schema[len(names) :]
    if names == [f.name for f in wanted.schema[: len(names)]] and _addable(added):
        # Both a PATCH of the schema and ALTER TABLE: BigQuery honours either (and the other
        # then changes nothing), the emulator the tests use keeps a table's schema and its rows
        # apart, and changes only the first with PATCH, only the second with ALTER.
        table.schema = [*table.schema, *added]
        table = client.update_table(table, ["schema"], retry=_retry(target))
        for field in added:
            _run_query(client, target, _add_column(target, name, field))
    if [f.name for f in table.schema] != [f.name for f in wanted.schema]:
        raise BigQueryError(
            f"BigQuery table {target.table(name)} has columns "
            f"{[f.name for f in table.schema]}, not {[f.name for f in wanted.schema]}: "
            "add the new columns (ALTER TABLE ... ADD COLUMN) or publish to another dataset"
        )
    return table


# Standard SQL's names of the scalar types bigquery_schema gives in legacy spelling.
_DDL_TYPES = {"FLOAT": "FLOAT64", "INTEGER": "INT64", "BOOLEAN": "BOOL"}


def _addable(fields: list[bigquery.SchemaField]) -> bool:
    """Whether `fields` can be added to an existing table: nullable scalars (and some)."""
    return bool(fields) and all(f.mode == "NULLABLE" and not f.fields for f in fields)


def _add_column(target: BigQueryTarget, table: str, field: bigquery.SchemaField) -> str:
    """`ALTER TABLE ... ADD COLUMN IF NOT EXISTS` for one nullable scalar `field` (a name
    declared in mpg.schemas, never input)."""
    kind = _DDL_TYPES.get(field.field_type, field.field_type)
    alter = f"alter table {_sql_table(target, table).sql('bigquery')}"
    return f"{alter} add column if not exists `{field.name}` {kind}"


def _load(
    client: bigquery.Client, target: BigQueryTarget, rows: pa.Table, table: bigquery.Table
) -> None:
    """One WRITE_TRUNCATE load job of `rows` as Parquet, keeping `table`'s schema and layout."""
    config = bigquery.LoadJobConfig(
        source_format=bigquery.SourceFormat.PARQUET,
        write_disposition=bigquery.WriteDisposition.WRITE_TRUNCATE,
        schema=table.schema,
        time_partitioning=table.time_partitioning,
        clustering_fields=table.clustering_fields,
    )
    # Arrow writes lists as Parquet LIST groups; inference makes them REPEATED, not RECORDs.
    parquet_options = bigquery.ParquetOptions()
    parquet_options.enable_list_inference = True
    config.parquet_options = parquet_options
    buffer = io.BytesIO()
    pq.write_table(rows, buffer)
    buffer.seek(0)
    job = client.load_table_from_file(buffer, table, job_config=config, rewind=True)
    job.result(retry=_retry(target), timeout=target.retry_s)


def _replace_days(
    client: bigquery.Client,
    target: BigQueryTarget,
    table: bigquery.Table,
    rows: pa.Table,
    days: Collection[date],
) -> None:
    """Swap `days` of `table` for `rows` through a staging table and one MERGE."""
    staged = bigquery.Table(target.table(_STAGING_PREFIX + table.table_id), schema=table.schema)
    _load(client, target, rows, staged)
    tables = {"target": table.table_id, "staged": staged.table_id}
    merge = parse_sql(
        "bigquery/replace_days.sql", {k: _sql_table(target, v) for k, v in tables.items()}
    )
    _spell_out_insert_row(merge, [f.name for f in table.schema])
    config = bigquery.QueryJobConfig(
        query_parameters=[bigquery.ArrayQueryParameter("days", "DATE", sorted(days))]
    )
    _run_query(client, target, sql_text(merge, "bigquery"), config)
    client.delete_table(staged, not_found_ok=True, retry=_retry(target))


def _spell_out_insert_row(merge: exp.Expression, columns: list[str]) -> None:
    """MERGE's `insert row` as `insert (c, ...) values (s.c, ...)`: the same rows on BigQuery,
    by name rather than position, and within what the emulator parses."""
    for insert in merge.find_all(exp.Insert):
        if insert.this.name.upper() == "ROW":
            insert.set("this", exp.Tuple(expressions=[exp.column(c) for c in columns]))
            insert.set("expression", exp.Tuple(expressions=[exp.column(c, "s") for c in columns]))


def _create_views(client: bigquery.Client, target: BigQueryTarget, current_version: str) -> None:
    """The `*_current` views, then the analysts' views that read them (in the order of VIEWS)."""

    def table(name: str) -> exp.Table:
        return _sql_table(target, name)

    for statement in [
        *current_view_statements(current_version, "bigquery", table),
        *bigquery_view_statements(table, BIGQUERY_TABLES),
    ]:
        _run_query(client, target, statement)


def _sql_table(target: BigQueryTarget, name: str) -> exp.Table:
    return exp.table_(name, db=target.dataset, catalog=target.project, quoted=True)


def _run_query(
    client: bigquery.Client,
    target: BigQueryTarget,
    statement: str,
    config: bigquery.QueryJobConfig | None = None,
) -> None:
    job = client.query(statement, job_config=config, retry=_retry(target))
    job.result(retry=_retry(target), timeout=target.retry_s)
