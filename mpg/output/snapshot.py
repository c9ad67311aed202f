"""A snapshot: everything one published run consists of, named by one small JSON object.

`DIR/current.json` names the current snapshot; a run publishes by replacing it, with a
precondition that it still names the snapshot the run started from (the GCS generation, the S3
ETag, a content hash locally: `Storage.write_if`). That one write is the instant a run's tables
appear: a reader that starts from `current.json` sees every table of the old snapshot or every
table of the new one, never a mix; a run killed before it leaves the old one current; and of two
writers that got past the lease, only one can publish.

    {
      "format": "mpg-snapshot/1",
      "run_id": "20261123T101500123456Z-1f2e3d",
      "previous": "20261122T101500654321Z-9a8b7c",       # kept for readers that started on it
      "published_at": "2026-11-23T10:16:02.120000+00:00",
      "key": {...},                                      # what the state was computed under
      "tables": {"job_day_goodput": "tables/job_day_goodput/metadata/00004-....metadata.json"},
      "state": {"manifest": "state/<run id>/manifest.parquet", "jobs": ..., "segments": ...,
                "files": ...},
      "metadata_files": ["tables/job_day_goodput/metadata/snap-....avro", ...]
    }

The Iceberg tables are there for other engines (Spark, Trino, BigQuery, DuckDB): point them at a
table's metadata file named here. mpg's own readers use the `files` state (every data file of
every table) and need no Iceberg client. Every path is relative to DIR.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from dataclasses import dataclass, field

from mpg.core.errors import StoreError
from mpg.output.state_key import StateKey
from mpg.output.store import POINTER, OutputStore
from mpg.storage import COMMITTING

FORMAT = "mpg-snapshot/1"


@dataclass(frozen=True)
class Snapshot:
    run_id: str
    key: StateKey
    tables: dict[str, str]  # table -> its Iceberg metadata file
    state: dict[str, str]  # store.STATE_FILES -> path (`RunFiles.state`)
    metadata_files: tuple[str, ...] = ()  # Iceberg manifests and manifest lists it needs
    previous: str | None = None
    published_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat()
    )

    def encode(self) -> bytes:
        fields = dataclasses.asdict(self)
        fields["key"] = json.loads(self.key.encode())
        return json.dumps({"format": FORMAT, **fields}, indent=2, sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes, where: str) -> Snapshot:
        try:
            fields = json.loads(raw)
            if fields.pop("format") != FORMAT:
                raise ValueError("not an mpg snapshot of a format this version reads")
            fields["key"] = StateKey.decode(json.dumps(fields["key"]).encode())
            fields["metadata_files"] = tuple(fields["metadata_files"])
            return cls(**fields)
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{where} cannot be read as an mpg snapshot: {exc}") from exc

    def own_files(self) -> set[str]:
        """The files this snapshot's pointer names directly (state and Iceberg metadata)."""
        return {*self.state.values(), *self.tables.values(), *self.metadata_files}


def read_current(store: OutputStore) -> tuple[Snapshot | None, str | None]:
    """The current snapshot and the version of `current.json` to publish over (None, None: the
    folder has never been published to)."""
    raw, version = store.storage.read_versioned(POINTER)
    if raw is None:
        return None, None
    return Snapshot.decode(raw, store.storage.uri_of(POINTER)), version


def read_snapshot(store: OutputStore, run_id: str) -> Snapshot | None:
    """A kept snapshot by its run id (its copy under state/), or None if it is gone."""
    path = store.run(run_id).snapshot
    if not store.storage.exists(path):
        return None
    return Snapshot.decode(store.storage.read_bytes(path), store.storage.uri_of(path))


def switch(store: OutputStore, snapshot: Snapshot, version: str | None) -> None:
    """Make `snapshot` current, if `current.json` is still at `version` (raises
    PreconditionFailedError otherwise). Its copy under state/ is written first, so the snapshot
    before it can always be found by run id."""
    data = snapshot.encode()
    store.storage.write_bytes(store.run(snapshot.run_id).snapshot, data)
    store.storage.write_if(POINTER, data, version, COMMITTING)
