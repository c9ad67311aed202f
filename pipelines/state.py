"""What a snapshot remembers between runs, so that the next run reads only what is new.

    state/<run id>/manifest.parquet   MANIFEST: every ingested input file
    state/<run id>/jobs.parquet       JOB_INDEX: every job id, where its records are, its counts
    state/<run id>/segments.parquet   SEGMENTS: the record store's files
    state/<run id>/files.parquet      DATA_FILES: every published table's data files

A run lists the trace root and compares it with the manifest (`plan_run`): a file is known by its
name, size and modification time, which any store's listing gives without reading the file.
Files it has not seen are parsed; files that changed or disappeared are *retracted* (their
records stop counting, as if they had never been there). Only the jobs that new or retracted
records belong to are reconciled and accounted again, and the open jobs (no JOB_END) when the
end of data moves (`mpg.pipelines.buckets`). The result is the same as computing everything from
scratch over the same files: a first run is exactly that, an update of an empty state.

A snapshot made by other code or other metric versions is not updated: the run computes
everything again (`StateKey`) and says why.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from mpg.pipelines.io import TraceFile
from mpg.schemas import MANIFEST, SOURCES

# A job bucket holds about this many records (new ones and the history of its jobs): what one
# worker holds in memory at once, whatever the size of the fleet.
RECORDS_PER_BUCKET = 1_000_000
# Bytes of a trace line, for a first guess at a file's records (gzip: about 8 times fewer bytes).
_LINE_BYTES = 90
_GZIP_RATIO = 8
# The record store is compacted when it holds more segments than this, or a segment is mostly
# dead (its jobs' records moved to later segments).
MAX_SEGMENTS = 16
MIN_LIVE_SHARE = 0.5


def _date(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def _covers(spans: Iterable[tuple[datetime.date, datetime.date]], days: tuple) -> bool:
    return any(a <= days[0] and days[1] <= b for a, b in spans)


# Per backfilled metric version, the day ranges (first, last) it has rows for.
Coverage = tuple[tuple[str, tuple[tuple[datetime.date, datetime.date], ...]], ...]


@dataclass(frozen=True)
class StateKey:
    """What a snapshot's state must match for a run to update it rather than start over."""

    code_version: str
    metric_versions: tuple[str, ...]
    # What the `*_current` views show: a change needs a new database, not new computation.
    current_metric_version: str
    # Versions backfilled over some days only (`mpg backfill`): version -> (first, last) ranges.
    coverage: Coverage = ()
    # The BigQuery dataset this state is published to in full ("" for none): a run publishing
    # to the same one again loads only the days that changed.
    bigquery: str = ""

    def encode(self) -> bytes:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, default=str).encode()

    @classmethod
    def decode(cls, raw: bytes) -> StateKey:
        fields = json.loads(raw)
        fields.pop("buckets", None)  # snapshots of the fixed-bucket layout
        fields["metric_versions"] = tuple(fields["metric_versions"])
        fields["coverage"] = tuple(
            (v, tuple((_date(a), _date(b)) for a, b in spans)) for v, spans in fields["coverage"]
        )
        return cls(**fields)

    def covered(self, version: str) -> tuple[tuple[datetime.date, datetime.date], ...]:
        """The day ranges `version` is backfilled over (none for a version every run computes)."""
        return dict(self.coverage).get(version, ())

    def with_coverage(self, version: str, first: datetime.date, last: datetime.date) -> StateKey:
        """This key with `version` also covering first..last (ranges merged, sorted)."""
        spans = sorted([*self.covered(version), (first, last)])
        merged: list[tuple[datetime.date, datetime.date]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1] + datetime.timedelta(days=1):
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        coverage = dict(self.coverage)
        coverage[version] = tuple(merged)
        return dataclasses.replace(self, coverage=tuple(sorted(coverage.items())))

    @property
    def computed_versions(self) -> tuple[str, ...]:
        """Every version a recomputed job gets rows of: the runs' own, then backfilled ones."""
        return tuple(dict.fromkeys([*self.metric_versions, *dict(self.coverage)]))

    def mismatch(
        self, other: StateKey, days: tuple[datetime.date, datetime.date] | None
    ) -> str | None:
        """Why a state made under `other` (whose job tables span `days`) cannot be updated under
        this key, or None. A version the runs start computing is no reason when a backfill
        already covers every published day: history needs no recomputation then."""
        added = [v for v in self.metric_versions if v not in other.metric_versions]
        dropped = [v for v in other.metric_versions if v not in self.metric_versions]
        if dropped or any(days and not _covers(other.covered(v), days) for v in added):
            old, new = ",".join(other.metric_versions), ",".join(self.metric_versions)
            return f"metric versions changed ({old} -> {new})"
        if other.code_version != self.code_version:
            return f"mpg changed ({other.code_version} -> {self.code_version})"
        return None


def estimated_records(files: Iterable[TraceFile]) -> int:
    """A first guess at the records in some trace files, from their sizes alone."""
    return sum(
        f.size * (_GZIP_RATIO if f.name.endswith(".gz") else 1) // _LINE_BYTES for f in files
    )


def bucket_count(records: int, records_per_bucket: int = RECORDS_PER_BUCKET) -> int:
    """Job buckets for a run that handles about `records` records: as many as keep each bucket
    within `records_per_bucket`, so a worker's memory does not grow with the fleet."""
    return max(1, math.ceil(records / records_per_bucket))


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
