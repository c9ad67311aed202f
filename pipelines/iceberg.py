"""The published tables as Apache Iceberg tables, so Spark, Trino, BigQuery and DuckDB read them.

mpg's workers write every data file themselves (Parquet, named after the run); the launcher then
commits each table's changes as one Iceberg snapshot: the files of the replaced day partitions
out, the new ones in (`add_files`, which reads only their footers). There is no catalog service
and no catalog database: `current.json` is the catalog. A table is opened from the metadata file
it names, a commit writes the table's next metadata file (`SnapshotCatalog`), and the new file
goes into the next `current.json`. That pointer, written last with a precondition, is what makes
all tables change at one instant (Iceberg itself commits one table at a time).

Each table keeps two Iceberg snapshots, the ones of the current and the previous mpg snapshot,
so a reader that started on the previous one can finish; older ones are expired in the same
commit, and their files removed by `OutputStore.collect`.

pyiceberg costs about a second to import alone (0.3 s after the pipeline's imports, which share
much of it): only `mpg run` and `mpg backfill` import this module.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.catalog.noop import NoopCatalog
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.update import TableRequirement, TableUpdate
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from mpg.output.store import OutputStore
from mpg.pipelines.finish import TableChange
from mpg.schemas import PUBLISHED
from mpg.storage import COMMITTING

_NAMESPACE = "mpg"
# Merge manifests at every commit: a table's metadata stays a few files however many runs it saw
# (a fast append otherwise adds a manifest per commit and keeps the old ones).
_PROPERTIES = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}


def _uri(store: OutputStore, path: str) -> str:
    full = store.storage.uri_of(path)
    return full if store.remote else f"file://{full}"


def _relative(store: OutputStore, uri: str) -> str:
    base = _uri(store, "")
    return uri.removeprefix(base).lstrip("/")


class SnapshotCatalog(MetastoreCatalog, NoopCatalog):
    """A pyiceberg catalog whose only store is the metadata files themselves.

    A catalog service (or pyiceberg's SqlCatalog, which needs SQLAlchemy) would keep a second
    record of each table's current metadata file beside `current.json`, one that every run would
    build and throw away. Here a table is opened from the metadata file the snapshot names
    (`register_table`), made by writing its first one (`create_table`), and a commit writes the
    next one and returns it (`commit_table`): SqlCatalog's steps, pyiceberg's own staging, without
    the database row. A commit is checked against the metadata the table was opened with
    (pyiceberg's requirements); that no other writer committed meanwhile is the run's lease and
    `current.json`'s precondition. What mpg never asks of a catalog (namespaces, listing,
    dropping, loading by name) is NoopCatalog's NotImplementedError.
    """

    def register_table(
        self, identifier: str | Identifier, metadata_location: str, overwrite: bool = False
    ) -> Table:
        io = self._load_file_io(location=metadata_location)
        metadata = FromInputFile.table_metadata(io.new_input(metadata_location))
        return self._open(identifier, metadata, metadata_location)

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        properties: Properties = EMPTY_DICT,
    ) -> Table:
        staged = self._create_staged_table(
            identifier, schema, location, partition_spec, sort_order, properties
        )
        self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
        return self._open(identifier, staged.metadata, staged.metadata_location)

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        staged = self._update_and_stage_table(table, table.name(), requirements, updates)
        if staged.metadata != table.metadata:  # as SqlCatalog: no change, no new file
            self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
            table = staged
        return CommitTableResponse(
            metadata=table.metadata, metadata_location=table.metadata_location
        )

    def _open(self, identifier: str | Identifier, metadata: TableMetadata, location: str) -> Table:
        return Table(
            identifier=self.identifier_to_tuple(identifier),
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(metadata.properties, location),
            catalog=self,
        )


def _catalog(store: OutputStore) -> SnapshotCatalog:
    properties = store.storage.iceberg_properties() if store.remote else {}
    return SnapshotCatalog("mpg", **properties)


def _new_table(catalog: SnapshotCatalog, store: OutputStore, name: str, schema: pa.Schema) -> Table:
    """A new, empty table (partitioned by `day` if it has one) at its place under DIR."""
    location = _uri(store, store.table_location(name))
    table = catalog.create_table((_NAMESPACE, name), schema, location, properties=_PROPERTIES)
    if "day" in schema.names:
        with table.update_spec() as update:
            update.add_identity("day")
    return table


def _columns(table) -> set[str]:  # a pyiceberg Table or TableMetadata
    return {f.name for f in table.schema().fields}


def _declared_columns(tx, schema: pa.Schema) -> None:
    """Make the table's columns `schema`'s, in the commit of `tx`: a column mpg added since the
    table was made is added (at the end, where the declared schema has it), one it dropped is
    dropped. Old data files keep their bytes; readers see NULL for a column a file lacks, and
    a run of new code replaces every file anyway (its state's code version changed)."""
    names = _columns(tx.table_metadata)
    if names == set(schema.names):
        return
    with tx.update_schema() as update:
        update.union_by_name(schema)
        for name in sorted(names - set(schema.names)):
            update.delete_column(name)


def _replace(table: Table, change: TableChange, store: OutputStore, schema: pa.Schema) -> None:
    from pyiceberg.expressions import AlwaysTrue, In
    from pyiceberg.table.update.snapshot import ExpireSnapshots

    before = {s.snapshot_id for s in table.snapshots()}
    tx = table.transaction()
    _declared_columns(tx, schema)
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


def metadata_files(table: Table, store: OutputStore) -> list[str]:
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
    tables: Iterable[str] = PUBLISHED,
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Commit `changes` to `tables` (each table is committed on its own, so some may be committed
    while others are still being written), whose current metadata files are `metadata`. A table
    that has none yet, or whose metadata places it elsewhere (the folder was copied or moved:
    Iceberg records absolute locations), is made anew at its place with every data file `files`
    (DATA_FILES) gives it. Returns each table's new metadata file and the metadata files they
    need."""
    catalog = _catalog(store)
    changed = {c.table: c for c in changes}
    locations, needed = {}, []
    for name in tables:
        with store.storage.reporting(store.table_location(name), COMMITTING):
            locations[name], files_needed = _commit_table(
                catalog, store, name, PUBLISHED[name], metadata, changed.get(name), files
            )
        needed.extend(files_needed)
    return locations, tuple(sorted(set(needed)))


def _commit_table(
    catalog, store: OutputStore, name: str, schema: pa.Schema, metadata: dict[str, str],
    change: TableChange | None, files: pa.Table,
) -> tuple[str, list[str]]:  # fmt: skip
    """Commit one table's change (or only its columns, where they differ from the schema's), or
    make the table anew where it has no metadata at its place; returns its new metadata file and
    the metadata files it needs."""
    table = None
    if name in metadata:
        table = catalog.register_table((_NAMESPACE, name), _uri(store, metadata[name]))
    if table is None or table.location() != _uri(store, store.table_location(name)):
        table = _new_table(catalog, store, name, schema)
        own = files.filter(pc.equal(files.column("table"), name)).column("path").to_pylist()
        change = TableChange(name, tuple(sorted(own)), None) if own else None
    elif change is None and _columns(table) != set(schema.names):
        change = TableChange(name, (), ())  # no rows change, only its columns
    if change is not None:
        _replace(table, change, store, schema)  # the commit updates `table` in place
    return _relative(store, table.metadata_location), metadata_files(table, store)
