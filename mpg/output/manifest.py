"""The manifest: every input file a snapshot ingested, so that the next run reads only what is
new (`state/<run id>/manifest.parquet`, MANIFEST).

A run lists the trace root and compares it with the manifest (`compare_files`): a file is known
by its name, size and modification time, which any store's listing gives without reading the
file. Files it has not seen are parsed; files that changed or disappeared are *retracted* (their
records stop counting, as if they had never been there). Only the jobs that new or retracted
records belong to are reconciled and accounted again, and the open jobs (no JOB_END) when the
end of data moves (`mpg.pipelines.buckets`). The result is the same as computing everything from
scratch over the same files: a first run is exactly that, an update of an empty state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from mpg.schemas import MANIFEST, SOURCES

if TYPE_CHECKING:  # the listing's description of an input file: only its fields are read
    from mpg.pipelines.io import TraceFile


@dataclass(frozen=True)
class FileDelta:
    """How the trace root differs from what the snapshot ingested."""

    new: tuple[TraceFile, ...]  # to parse: not seen, or changed since
    kept: pa.Table  # MANIFEST rows of files ingested before and unchanged
    retracted: tuple[str, ...]  # names of ingested files that changed or are gone

    @property
    def changed(self) -> int:
        """Of the new files, those that replace an ingested file of the same name."""
        return len({f.name for f in self.new} & set(self.retracted))


def compare_files(files: list[TraceFile], manifest: pa.Table) -> FileDelta:
    """Which files to parse and which to retract: a file whose name, size and modification time
    match its manifest row is known; any other is read again (its worker hashes it)."""
    known = {
        (r["name"], r["size"], r["mtime_ns"])
        for r in manifest.select(["name", "size", "mtime_ns"]).to_pylist()
    }
    new = tuple(f for f in files if (f.name, f.size, f.mtime_ns) not in known)
    unchanged = {f.name for f in files} - {f.name for f in new}
    names = manifest.column("name")
    kept = manifest.filter(pc.is_in(names, pa.array(sorted(unchanged), pa.string())))
    retracted = tuple(sorted(set(names.to_pylist()) - unchanged))
    return FileDelta(new, kept, retracted)


def finished_manifest(kept: pa.Table, parsed: Iterable[dict[str, object]]) -> pa.Table:
    """The manifest after a run: the kept rows, and the rows of the files it parsed."""
    rows = pa.Table.from_pylist(list(parsed), schema=MANIFEST)
    table = pa.concat_tables([kept.cast(MANIFEST), rows])
    return table.sort_by([("source", "ascending"), ("name", "ascending")])


def source_totals(manifest: pa.Table) -> dict[str, tuple[int, int]]:
    """Per source, the lines read and the records quarantined at parsing."""
    totals = {}
    for source in SOURCES:
        rows = manifest.filter(pc.equal(manifest.column("source"), source))
        totals[source] = (
            pc.sum(rows.column("lines_read")).as_py() or 0,
            pc.sum(rows.column("quarantined")).as_py() or 0,
        )
    return totals
