"""What a snapshot remembers between runs, so that the next run ingests only what is new.

    state/manifest.parquet                          MANIFEST: every ingested file, by content hash
    state/parsed/source=S/bucket=NNNN/seg-*.parquet  every parsed record, before de-duplication
    state/buckets/part-bNNNN.parquet                BUCKET_STATE: counts, end of data, open jobs
    state/jobs/part-bNNNN.parquet                   JOB_INDEX: each job's days, and whether open

A run compares the trace root with the current snapshot's manifest (`plan_run`): files whose
content it has ingested before are not read again; new files are parsed; files that changed or
disappeared are *retracted* (their parsed records stop counting). Whatever job buckets the new
and retracted records fall in are reconciled again from the parsed store, and only the jobs
whose records changed (and the open ones, when the end of data moves) are accounted again
(`mpg.pipelines.buckets`). The result is the same as computing everything from scratch over the
same files: a first run is exactly that, an update of an empty state.

A snapshot made by other code, or with other buckets or metric versions, is not updated: the run
computes everything again (`StateKey`), and says why.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mpg.errors import TraceFileError
from mpg.pipelines.io import TraceFile, read_parquet, stable_id, write_parquet
from mpg.schemas import BUCKET_STATE, MANIFEST, RECORD_COUNTS, SOURCES, concat

STATE = Path("state")
MANIFEST_FILE = STATE / "manifest.parquet"
# Scratch results a run's pipeline leaves for the launcher, removed before publishing.
WORK = Path("work")
INGESTED = WORK / "ingested.json"  # per parsed file: lines read, quarantined, buckets
CHANGED_DAYS = WORK / "changed_days.json"  # (job table, day) pairs whose rows changed
_KEY = b"mpg.state"
# A bucket with more segments than this is compacted into one when it is next updated.
MAX_SEGMENTS = 8


def segment_folder(root: Path, source: str, bucket: int) -> Path:
    return root / STATE / "parsed" / f"source={source}" / f"bucket={bucket:04d}"


def bucket_state_file(root: Path, bucket: int) -> Path:
    return root / STATE / "buckets" / f"part-b{bucket:04d}.parquet"


def job_index_file(root: Path, bucket: int) -> Path:
    return root / STATE / "jobs" / f"part-b{bucket:04d}.parquet"


def parse_quarantine_prefix(name: str) -> str:
    """Quarantine files written for input file `name` at parsing start with this."""
    return f"part-f{stable_id(name)}-"


def _date(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def _covers(spans: Iterable[tuple[datetime.date, datetime.date]], days: tuple) -> bool:
    return any(a <= days[0] and days[1] <= b for a, b in spans)


# Per backfilled metric version, the day ranges (first, last) it has rows for.
Coverage = tuple[tuple[str, tuple[tuple[datetime.date, datetime.date], ...]], ...]


@dataclass(frozen=True)
class StateKey:
    """What a snapshot's state must match for a run to update it rather than start over."""

    buckets: int
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
        if other.buckets != self.buckets:
            return f"--buckets changed ({other.buckets} -> {self.buckets})"
        added = [v for v in self.metric_versions if v not in other.metric_versions]
        dropped = [v for v in other.metric_versions if v not in self.metric_versions]
        if dropped or any(days and not _covers(other.covered(v), days) for v in added):
            old, new = ",".join(other.metric_versions), ",".join(self.metric_versions)
            return f"metric versions changed ({old} -> {new})"
        if other.code_version != self.code_version:
            return f"mpg changed ({other.code_version} -> {self.code_version})"
        return None


@dataclass(frozen=True)
class Previous:
    """The current snapshot's state, read once at the start of a run."""

    snapshot: Path
    key: StateKey
    manifest: pa.Table  # MANIFEST
    buckets: pa.Table  # BUCKET_STATE, every bucket that has records

    @property
    def data_end(self) -> int | None:
        """The snapshot's end of data: the latest record among all buckets (epoch µs)."""
        return pc.max(self.buckets.column("data_end").cast(pa.int64())).as_py()

    def published_days(self) -> tuple[datetime.date, datetime.date] | None:
        """The first and last day the job tables have rows on; None if they have none."""
        folder = self.snapshot / "tables" / "job_day_goodput"
        days = sorted(_date(p.name.removeprefix("day=")) for p in folder.glob("day=*"))
        return (days[0], days[-1]) if days else None

    def bucket_ends(self) -> list[tuple[int, int | None, int]]:
        """Per bucket that has records: (bucket, end of data in epoch µs, open jobs)."""
        columns = [
            self.buckets.column("bucket").to_pylist(),
            self.buckets.column("data_end").cast(pa.int64()).to_pylist(),
            self.buckets.column("open_jobs").to_pylist(),
        ]
        return sorted(set(zip(*columns, strict=True)))


def read_bucket_states(root: Path) -> pa.Table:
    files = sorted((root / STATE / "buckets").glob("part-b*.parquet"))
    return concat((read_parquet(f, BUCKET_STATE) for f in files), BUCKET_STATE)


def load_previous(current: Path) -> Previous | None:
    """The state of the snapshot `current` points to; None if there is none (a first run, or a
    snapshot made before runs kept state)."""
    if not current.exists():
        return None
    snapshot = current.resolve()
    manifest_file = snapshot / MANIFEST_FILE
    if not manifest_file.exists():
        return None
    manifest = read_parquet(manifest_file, MANIFEST)
    key = StateKey.decode(pq.read_schema(manifest_file).metadata[_KEY])
    return Previous(snapshot, key, manifest, read_bucket_states(snapshot))


def write_manifest(root: Path, manifest: pa.Table, key: StateKey) -> None:
    schema = MANIFEST.with_metadata({**MANIFEST.metadata, _KEY: key.encode()})
    write_parquet(
        manifest.sort_by([("source", "ascending"), ("name", "ascending")]).cast(schema),
        root / MANIFEST_FILE,
    )


def content_hash(file: TraceFile) -> str:
    """SHA-256 of a trace file's bytes as stored (compressed or not)."""
    try:
        with Path(file.path).open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TraceFileError(f"cannot read trace file {file.name}: {reason}") from exc


@dataclass(frozen=True)
class InputFile:
    """A trace file with its identity: the manifest's row for it, less what parsing finds."""

    file: TraceFile
    size: int
    mtime_ns: int
    sha256: str


def identify(files: Iterable[TraceFile], manifest: pa.Table) -> list[InputFile]:
    """Each file with its content hash. A file whose name, size and modification time match its
    manifest row keeps the recorded hash; any other is read and hashed."""
    known = {
        r["name"]: r for r in manifest.select(["name", "size", "mtime_ns", "sha256"]).to_pylist()
    }
    out = []
    for f in files:
        stat = Path(f.path).stat()
        row = known.get(f.name)
        same = row is not None and (row["size"], row["mtime_ns"]) == (
            stat.st_size,
            stat.st_mtime_ns,
        )
        sha = row["sha256"] if same else content_hash(f)
        out.append(InputFile(f, stat.st_size, stat.st_mtime_ns, sha))
    return out


@dataclass(frozen=True)
class Plan:
    """What a run will do: the files to parse, the files to retract, and from what state."""

    previous: Previous | None  # None: compute everything from scratch
    reason: str  # why this plan, in words
    new: tuple[InputFile, ...]  # to parse
    kept: pa.Table  # MANIFEST rows of files ingested before and unchanged
    retracted: tuple[str, ...]  # names of ingested files that changed or are gone

    key: StateKey  # what this run computes

    @property
    def up_to_date(self) -> bool:
        """Nothing to ingest, retract or republish (a run that does not publish to BigQuery
        leaves it as it is)."""
        if self.previous is None or self.new or self.retracted:
            return False
        return self.previous.key == self._kept_bigquery()

    def _kept_bigquery(self) -> StateKey:
        if self.key.bigquery or self.previous is None:
            return self.key
        return dataclasses.replace(self.key, bigquery=self.previous.key.bigquery)

    def bigquery_days(self, changed: list[tuple[str, str]]) -> set[datetime.date] | None:
        previous = None if self.previous is None else self.previous.key
        return bigquery_days(previous, self.key, changed)

    def retracted_buckets(self) -> list[int]:
        """The buckets that records of retracted files went to."""
        assert self.previous is not None or not self.retracted
        if not self.retracted:
            return []
        manifest = self.previous.manifest  # type: ignore[union-attr]
        rows = manifest.filter(pc.is_in(manifest.column("name"), pa.array(self.retracted)))
        return sorted(set(pc.list_flatten(rows.column("buckets")).to_pylist()))

    def live(self) -> dict[str, str]:
        """Every input file's content hash, by name: the files whose records count."""
        live = content_hashes(self.kept)
        live.update({f.file.name: f.sha256 for f in self.new})
        return live


def plan_run(
    files: list[TraceFile], previous: Previous | None, key: StateKey, full: bool = False
) -> Plan:
    """Compare the trace root with the previous state under `key` (whose coverage is then
    the previous one's, less the versions this run computes for every day)."""
    if previous is not None:
        coverage = tuple((v, c) for v, c in previous.key.coverage if v not in key.metric_versions)
        key = dataclasses.replace(key, coverage=coverage)
    why = None if previous is None else key.mismatch(previous.key, previous.published_days())
    if previous is None or full or why is not None:
        reason = "first run" if previous is None and not full else why or "--full"
        identified = identify(files, MANIFEST.empty_table())
        everything = tuple(identified)
        return Plan(
            None, f"computing everything: {reason}", everything, MANIFEST.empty_table(), (), key
        )
    identified = identify(files, previous.manifest)
    old = content_hashes(previous.manifest)
    new = tuple(f for f in identified if old.get(f.file.name) != f.sha256)
    unchanged = {f.file.name for f in identified if old.get(f.file.name) == f.sha256}
    retracted = tuple(sorted(n for n in old if n not in unchanged))
    kept = _refresh_stat(previous.manifest, [f for f in identified if f.file.name in unchanged])
    changed = sum(1 for f in new if f.file.name in old)
    reason = (
        f"{len(new) - changed} new, {changed} changed and "
        f"{len(retracted) - changed} removed trace files"
    )
    if not new and not retracted:
        reason = _republished(previous.key, key)
    return Plan(previous, reason, new, kept, retracted, key)


def _refresh_stat(manifest: pa.Table, unchanged: list[InputFile]) -> pa.Table:
    """Manifest rows of unchanged files, with their current size and modification time (a file
    touched but not changed is then not hashed again next time)."""
    rows = {r["name"]: r for r in manifest.to_pylist()}
    kept = []
    for f in unchanged:
        row = dict(rows[f.file.name])
        row.update(mtime_ns=f.mtime_ns)
        kept.append(row)
    return pa.Table.from_pylist(kept, schema=MANIFEST)


def finished_manifest(plan: Plan, ingested: list[dict]) -> pa.Table:
    """The manifest after a run: the kept rows, and a row per file it parsed (what parsing
    found comes from the pipeline: `ingested`, one entry per file that had any line)."""
    found = {r["name"]: r for r in ingested}
    rows = [
        {
            "source": f.file.source,
            "name": f.file.name,
            "size": f.size,
            "mtime_ns": f.mtime_ns,
            "sha256": f.sha256,
            "lines_read": found.get(f.file.name, {}).get("lines_read", 0),
            "quarantined": found.get(f.file.name, {}).get("quarantined", 0),
            "buckets": found.get(f.file.name, {}).get("buckets", []),
        }
        for f in plan.new
    ]
    return concat([plan.kept, pa.Table.from_pylist(rows, schema=MANIFEST)], MANIFEST)


def record_counts(manifest: pa.Table, buckets: pa.Table) -> pa.Table:
    """RECORD_COUNTS over everything ingested: lines read and quarantined at parsing per file,
    the rest per bucket, so that read = accepted + duplicates + quarantined per source."""
    rows = []
    for source in SOURCES:
        files = manifest.filter(pc.equal(manifest.column("source"), source))
        states = buckets.filter(pc.equal(buckets.column("source"), source))

        def total(table: pa.Table, column: str) -> int:
            return pc.sum(table.column(column)).as_py() or 0

        rows.append(
            {
                "source": source,
                "records_read": total(files, "lines_read"),
                "accepted": total(states, "accepted"),
                "duplicates": total(states, "duplicates"),
                "quarantined": total(files, "quarantined") + total(states, "quarantined"),
            }
        )
    return pa.Table.from_pylist(rows, schema=RECORD_COUNTS)


def _republished(old: StateKey, new: StateKey) -> str:
    """Why a run with no new, changed or removed files publishes anyway."""
    if old.current_metric_version != new.current_metric_version:
        versions = f"{old.current_metric_version} -> {new.current_metric_version}"
        return f"the *_current views change version ({versions})"
    if new.bigquery and old.bigquery != new.bigquery:
        return f"publishing every table to BigQuery {new.bigquery}"
    return "no new, changed or removed trace files"


def content_hashes(manifest: pa.Table) -> dict[str, str]:
    """A manifest's content hash per file name."""
    names, hashes = manifest.column("name").to_pylist(), manifest.column("sha256").to_pylist()
    return dict(zip(names, hashes, strict=True))


def bigquery_days(
    previous: StateKey | None, key: StateKey, changed: list[tuple[str, str]]
) -> set[datetime.date] | None:
    """The days to load into BigQuery: those whose rows changed, when the dataset already
    holds the previous state; None (every table whole) otherwise."""
    if previous is None or previous.bigquery != key.bigquery:
        return None
    return {_date(day) for _, day in changed}


def finish_state(staging: Path, manifest: pa.Table, key: StateKey) -> list[tuple[str, str]]:
    """After the pipeline: write the manifest under `key` and the record counts it implies, and
    return the (job table, day) pairs whose rows changed, removing the pipeline's `work/`."""
    changed = sorted(tuple(c) for c in json.loads((staging / CHANGED_DAYS).read_text()))
    shutil.rmtree(staging / WORK)
    write_manifest(staging, manifest, key)
    counts = record_counts(manifest, read_bucket_states(staging))
    write_parquet(counts, staging / "tables" / "record_counts" / "part-0.parquet")
    return changed
