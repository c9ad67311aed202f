"""The published tables as Apache Iceberg tables, so Spark, Trino, BigQuery and DuckDB read them.

mpg's workers write every data file themselves (Parquet, named after the run); the launcher then
commits each table's changes as one Iceberg snapshot: the files of the replaced day partitions
out, the new ones in (`add_files`, which reads only their footers). There is no catalog service:
the catalog is an in-memory one loaded from the metadata files that `current.json` names, and a
table's new metadata file goes back into the next `current.json`. That pointer, written last,
is what makes all tables change at one instant (Iceberg itself commits one table at a time).

Each table keeps two Iceberg snapshots, the ones of the current and the previous mpg snapshot,
so a reader that started on the previous one can finish; older ones are expired in the same
commit, and their files removed by `OutputStore.collect`.

pyiceberg costs about a second to import: only `mpg run` and `mpg backfill` import this module.
"""

from __future__ import annotations

import contextlib
import datetime
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.exceptions import NoSuchTableError

from mpg.pipelines.store import OutputStore
from mpg.schemas import PUBLISHED
from mpg.storage import COMMITTING

_NAMESPACE = "mpg"
# Merge manifests at every commit: a table's metadata stays a few files however many runs it saw
# (a fast append otherwise adds a manifest per commit and keeps the old ones).
_PROPERTIES = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}


@dataclass(frozen=True)
class TableChange:
    """What a run changes in one table: `added` data files replace the `days` partitions (all of
    the table when `days` is None; nothing is removed when it is empty)."""

    table: str
    added: tuple[str, ...]
    days: tuple[datetime.date, ...] | None


def _uri(store: OutputStore, path: str) -> str:
    full = store.storage.uri_of(path)
    return full if store.remote else f"file://{full}"


def _relative(store: OutputStore, uri: str) -> str:
    base = _uri(store, "")
    return uri.removeprefix(base).lstrip("/")


def _catalog(store: OutputStore):  # -> pyiceberg.catalog.sql.SqlCatalog
    from pyiceberg.catalog.sql import SqlCatalog

    properties = store.storage.iceberg_properties() if store.remote else {}
    catalog = SqlCatalog("mpg", uri="sqlite:///:memory:", **properties)
    catalog.create_namespace(_NAMESPACE)
    return catalog


def _new_table(catalog, store: OutputStore, name: str, schema: pa.Schema):
    """A new, empty table (partitioned by `day` if it has one) at its place under DIR."""
    identifier = f"{_NAMESPACE}.{name}"
    with contextlib.suppress(NoSuchTableError):
        catalog.drop_table(identifier)  # the misplaced one registered before (its files stay)
    table = catalog.create_table(
        identifier,
        schema=schema,
        location=_uri(store, store.table_location(name)),
        properties=_PROPERTIES,
    )
    if "day" in schema.names:
        with table.update_spec() as update:
            update.add_identity("day")
        table = catalog.load_table(identifier)
    return table


def _replace(table, change: TableChange, store: OutputStore) -> None:
    from pyiceberg.expressions import AlwaysTrue, In
    from pyiceberg.table.update.snapshot import ExpireSnapshots

    before = {s.snapshot_id for s in table.snapshots()}
    tx = table.transaction()
    if before:
        if change.days is None:
            tx.delete(AlwaysTrue())
        elif change.days:
            # Days new to the table match nothing: expected, and no news to a user's terminal.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Delete operation did not match any records")
                tx.delete(In("day", [d.isoformat() for d in change.days]))
    if change.added:
        tx.add_files([_uri(store, p) for p in change.added], check_duplicate_files=False)
    if before and len(tx.table_metadata.snapshots) > len(before):
        # Only this commit's snapshots stay: the tables' history is one mpg snapshot deep.
        ExpireSnapshots(tx).by_ids(sorted(before)).commit()
    tx.commit_transaction()


def metadata_files(table, store: OutputStore) -> list[str]:
    """The files a table's current metadata needs: itself, and every kept snapshot's manifest
    list and manifests (relative to DIR)."""
    files = [table.metadata_location]
    for snapshot in table.snapshots():
        files.append(snapshot.manifest_list)
        files.extend(m.manifest_path for m in snapshot.manifests(table.io))
    return sorted({_relative(store, f) for f in files})


def commit_tables(
    store: OutputStore,
    metadata: dict[str, str],
    changes: Sequence[TableChange],
    files: pa.Table,
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Commit `changes` to the tables whose current metadata files are `metadata`. A table that
    has none yet, or whose metadata places it elsewhere (the folder was copied or moved: Iceberg
    records absolute locations), is made anew at its place with every data file `files`
    (DATA_FILES) gives it. Returns every table's new metadata file and the metadata files all of
    them need."""
    catalog = _catalog(store)
    changed = {c.table: c for c in changes}
    locations, needed = {}, []
    for name, schema in PUBLISHED.items():
        with store.storage.reporting(store.table_location(name), COMMITTING):
            locations[name], files_needed = _commit_table(
                catalog, store, name, schema, metadata, changed.get(name), files
            )
        needed.extend(files_needed)
    return locations, tuple(sorted(set(needed)))


def _commit_table(
    catalog, store: OutputStore, name: str, schema: pa.Schema, metadata: dict[str, str],
    change: TableChange | None, files: pa.Table,
) -> tuple[str, list[str]]:  # fmt: skip
    """Commit one table's change, or make the table anew where it has no metadata at its place;
    returns its new metadata file and the metadata files it needs."""
    identifier = f"{_NAMESPACE}.{name}"
    table = None
    if name in metadata:
        table = catalog.register_table(identifier, _uri(store, metadata[name]))
    if table is None or table.location() != _uri(store, store.table_location(name)):
        table = _new_table(catalog, store, name, schema)
        own = files.filter(pc.equal(files.column("table"), name)).column("path").to_pylist()
        change = TableChange(name, tuple(sorted(own)), None) if own else None
    if change is not None:
        _replace(table, change, store)
        table = catalog.load_table(identifier)
    return _relative(store, table.metadata_location), metadata_files(table, store)
