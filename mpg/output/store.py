"""The output folder: every path mpg uses under `--out`, and every read and write of it.

Like a Dagster IO manager, this module is the only one that knows where things live: every
path is a constant or a method here, of `OutputStore` (the folder) or of `RunFiles` (what one
run writes: `store.run(run_id)`), and the steps ask them for paths rather than spell one. DIR is
a local folder, `gs://bucket/prefix` or `s3://bucket/prefix` (`mpg.storage`):

    current.json                       POINTER: the current snapshot (`mpg.output.snapshot`),
                                       written last and with a precondition: what readers start from
    mpg.duckdb                         DATABASE, local folders only: the current snapshot in DuckDB
    validation_report.md               REPORT: what the expectation suites found in it
    mpg.toml                           CONFIG: the folder's own configuration (the user's, optional)
    runs/<run id>.json                 .record: one record per run, whatever became of it
    runs/<run id>.log                  .log: its log, Beam's and the workers' (`mpg.pipelines.logs`)
    runs/<run id>-validation.md        .failed_validation: the report of a run a check stopped
    tables/<table>/metadata/...        table_location: each published table as an Iceberg table
    tables/<table>/data/[day=D/]<run id>-0.parquet      .data_file: its data files
    records/<source>/<segment>.parquet segment: the record store, every parsed record by job
                                       (a run's segments: <run id>-b<bucket>, `.segment_id`)
    state/<run id>/<name>.parquet      .state: a snapshot's STATE_FILES (manifest, job index,
                                       segments, files)
    state/<run id>/snapshot.json       .snapshot: its copy of what current.json names
    .mpg/lock                          LOCK: the lease of the run writing DIR
    .mpg/staging/<run id>/             .staging: a run's scratch, removed when it ends
        <step>/<name>.arrow            records moving between its steps, a folder per step:
                                       parsed, refused, planned, quarantine-refs, accepted,
                                       jobs, index, days, recovered, import-quarantine
        results/<name>.parquet         .result: what the pipeline's sinks wrote
        mpg.duckdb                     .database: the new database, renamed into place

Files are never rewritten in place: every name carries the run that wrote it, so a snapshot's
files stay as they were while a later run writes its own, and a reader of the old snapshot
finishes undisturbed. What no kept snapshot names is removed by the next run (`collect`).

Scratch files are Arrow IPC with one record batch per job bucket: a bucket's reader fetches its
batch alone (a ranged read on object stores), and nothing but the file's name and the batch's
number travels through Beam's shuffle.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from mpg.core.locations import POINTER
from mpg.schemas import concat
from mpg.storage import Storage

DATABASE = "mpg.duckdb"
REPORT = "validation_report.md"
CONFIG = "mpg.toml"
RUNS = "runs"
LOCK = ".mpg/lock"
STAGING = ".mpg/staging"
TABLES = "tables"
RECORDS = "records"
STATE = "state"
# What the next run's `collect` never removes: the user's and the log's, and the switch itself.
_KEPT = (POINTER, DATABASE, REPORT, CONFIG, LOCK)
_KEPT_PREFIXES = (f"{RUNS}/", ".mpg/")
_RECORD, _LOG = ".json", ".log"
# The files of a snapshot's state (`mpg.output.snapshot`), each `state/<run id>/<name>.parquet`:
# MANIFEST (every ingested input file, `mpg.output.manifest`), JOB_INDEX (every job: where its
# records are, its counts), SEGMENTS (the record store's files), DATA_FILES (every published
# table's data files).
STATE_FILES = ("manifest", "jobs", "segments", "files")

# Row groups of stored records: small enough that reading some jobs skips most of a segment.
RECORD_ROW_GROUP = 32_768
# Scratch compression, by whether the folder is on object storage: lz4 where the bytes travel
# (3.4x fewer for parsed spans), none on a local disk, where compressing and decompressing files
# that the run removes at its end cost 0.4 s of a 2M-span run (docs/decisions.md).
_SCRATCH_OPTIONS = {
    True: ipc.IpcWriteOptions(compression="lz4"),
    False: ipc.IpcWriteOptions(compression=None),
}


class OutputStore:
    """One output folder (`out`: a path or URI); picklable as its URI."""

    def __init__(self, out: str) -> None:
        self.storage = Storage(out)

    def __reduce__(self) -> tuple:
        return (OutputStore, (self.storage.uri,))

    @property
    def uri(self) -> str:
        return self.storage.uri

    @property
    def remote(self) -> bool:
        return self.storage.remote

    # -- where things are ---------------------------------------------------------------------

    def run(self, run_id: str) -> RunFiles:
        """Every path of one run (its scratch, its snapshot's state, its data files, its record)."""
        return RunFiles(self, run_id)

    @staticmethod
    def segment(source: str, segment: str) -> str:
        """A record-store segment of any snapshot (`RunFiles.segment_id` names it)."""
        return f"{RECORDS}/{source}/{segment}.parquet"

    @staticmethod
    def table_location(table: str) -> str:
        return f"{TABLES}/{table}"

    def run_files(self) -> tuple[list[str], list[str]]:
        """The paths of every run record and every run log (`RunFiles.record`, `.log`), oldest
        run first: one listing."""
        listed = sorted(e.path for e in self.storage.list(RUNS))
        return [p for p in listed if p.endswith(_RECORD)], [p for p in listed if p.endswith(_LOG)]

    # -- scratch: records between two steps of one run ----------------------------------------

    def write_scratch(self, path: str, batches: Sequence[pa.Table]) -> list[int]:
        """Each table as one record batch of one IPC file; returns the row count of each."""
        schema = batches[0].schema
        with (
            self.storage.open_output(path) as stream,
            ipc.new_file(stream, schema, options=_SCRATCH_OPTIONS[self.remote]) as writer,
        ):
            for table in batches:
                writer.write_batch(_one_batch(table.cast(schema)))
        return [t.num_rows for t in batches]

    def scratch_reader(self, paths: Sequence[str], schema: pa.Schema) -> pa.RecordBatchReader:
        """Every batch of some scratch files, one file at a time (for DuckDB to stream: Arrow
        IPC files go through `Storage.open_input`, not a Dataset, `mpg.storage.reads` says
        why)."""

        def batches() -> Iterable[pa.RecordBatch]:
            for path in paths:
                yield from self.read_scratch(path).cast(schema).to_batches()

        return pa.RecordBatchReader.from_batches(schema, batches())

    def read_scratch(self, path: str, batches: Iterable[int] | None = None) -> pa.Table:
        """Some record batches of a scratch file (all when `batches` is None), as one table."""
        with self.storage.reporting(path), self.storage.open_mapped(path) as handle:
            reader = ipc.open_file(handle)
            wanted = range(reader.num_record_batches) if batches is None else batches
            return pa.Table.from_batches([reader.get_batch(i) for i in wanted], reader.schema)

    # -- Parquet ------------------------------------------------------------------------------

    def write_parquet(self, table: pa.Table, path: str, row_group_size: int | None = None) -> int:
        """`table` as one Parquet file; returns its rows."""
        self.storage.write_parquet(table, path, row_group_size=row_group_size)
        return table.num_rows

    def write_segment(self, records: pa.Table, source: str, segment: str) -> None:
        """Records (sorted by job hash) as a record-store segment: row groups of
        RECORD_ROW_GROUP, so that reading some jobs skips most of it, and dictionaries for the
        text columns only (job ids, kinds and file names repeat; instants and numbers seldom do:
        a dictionary for every column cost a third more CPU, for a larger file)."""
        text = [f.name for f in records.schema if pa.types.is_string(f.type)]
        self.storage.write_parquet(
            records,
            self.segment(source, segment),
            row_group_size=RECORD_ROW_GROUP,
            use_dictionary=text,
        )

    def read_parquet(self, path: str, schema: pa.Schema) -> pa.Table:
        return self.storage.read_parquet(path, schema)

    def read_parquets(self, paths: Iterable[str], schema: pa.Schema) -> pa.Table:
        return concat((self.read_parquet(p, schema) for p in paths), schema)

    def read_hash_range(self, path: str, schema: pa.Schema, low: int, high: int) -> pa.Table:
        """The rows of a file sorted by `job_hash` whose hash lies in [low, high): only the row
        groups whose statistics overlap the range are read."""
        with self.storage.reading_parquet(path), self.storage.open_input(path) as handle:
            parquet = pq.ParquetFile(handle)
            column = parquet.schema_arrow.get_field_index("job_hash")
            groups = [
                i
                for i in range(parquet.num_row_groups)
                if _overlaps(parquet.metadata.row_group(i).column(column).statistics, low, high)
            ]
            table = parquet.read_row_groups(groups, columns=schema.names) if groups else None
        if table is None:
            return schema.empty_table()
        hashes = table.column("job_hash")
        inside = pc.and_(pc.greater_equal(hashes, low), pc.less(hashes, high))
        return table.filter(inside).cast(schema)

    # -- what the folder holds ----------------------------------------------------------------

    def files(self) -> list[str]:
        """Every file under DIR that snapshots may own (not the log, the lock, the switch, the
        database or the user's configuration)."""
        return [
            e.path
            for e in self.storage.list()
            if e.path not in _KEPT and not e.path.startswith(_KEPT_PREFIXES)
        ]

    def collect(self, referenced: set[str]) -> int:
        """Remove every file no kept snapshot references, and every run's scratch (the staging
        folder, with the empty run folder a run killed as it began may leave); returns how many
        files went. Call with the lease held (no other run is writing)."""
        garbage = [p for p in self.files() if p not in referenced]
        self.storage.delete(garbage)
        self.storage.delete_prefix(STAGING)
        return len(garbage)


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    batches = table.combine_chunks().to_batches()
    if not batches:
        return pa.RecordBatch.from_pylist([], schema=table.schema)
    return batches[0]


def _overlaps(statistics: pq.Statistics | None, low: int, high: int) -> bool:
    if statistics is None or not statistics.has_min_max:
        return True
    return statistics.max >= low and statistics.min < high


@dataclass(frozen=True)
class RunFiles:
    """Every path one run writes, by what it holds: its scratch (records moving between its
    steps, a folder per step), its snapshot's state, its tables' data files, its record-store
    segments, its record and log. Pickles small (the store as its URI): the steps carry it."""

    store: OutputStore
    run_id: str

    # -- scratch: .mpg/staging/<run id>/<step>/<name>.arrow --------------------------------

    @property
    def staging(self) -> str:
        return f"{STAGING}/{self.run_id}"

    def delete_scratch(self) -> None:
        self.store.storage.delete_prefix(self.staging)

    def _scratch(self, step: str, name: str) -> str:
        return f"{self.staging}/{step}/{name}.arrow"

    @staticmethod
    def bucket_part(bucket: int, settled: bool = False) -> str:
        """The name of one bucket's scratch files (`settled`: of the jobs the update step
        accounted, beside those accounting accounts later)."""
        return f"b{bucket:05d}" + ("-settled" if settled else "")

    def parsed(self, source: str, file_id: str, first_line: int) -> str:
        """One block's parsed records, a batch per job bucket (`file_id`: `io.stable_id`)."""
        return self._scratch("parsed", _block(source, file_id, first_line))

    def refused(self, source: str, file_id: str, first_line: int) -> str:
        """One block's lines refused at parsing (QUARANTINE rows)."""
        return self._scratch("refused", _block(source, file_id, first_line))

    def planned(self, bucket: int) -> str:
        """The jobs one bucket rewrites though no new record names them (PLANNED)."""
        return self._scratch("planned", self.bucket_part(bucket))

    def quarantine_refs(self, bucket: int) -> str:
        """One bucket's refused records, by reference (QUARANTINE_REF)."""
        return self._scratch("quarantine-refs", self.bucket_part(bucket))

    def accepted(self, part: str, source: str) -> str:
        """Accepted records of one source that a later step accounts."""
        return self._scratch("accepted", f"{part}-{source}")

    def bucket_jobs(self, bucket: int) -> str:
        """The rows of every job one bucket rewrote, as the update step left them."""
        return self._scratch("jobs", self.bucket_part(bucket))

    def bucket_index(self, bucket: int) -> str:
        """One bucket's new JOB_INDEX rows, as accounting left them."""
        return self._scratch("index", self.bucket_part(bucket))

    def day_rows(self, part: str, table: str) -> str:
        """One bucket part's rows of a job table (or the jobs they replace), a batch per day."""
        return self._scratch("days", f"{part}-{table}")

    def recovered(self, file_id: str) -> str:
        """One input file's refused records with their text (QUARANTINE rows)."""
        return self._scratch("recovered", file_id)

    @property
    def import_quarantine(self) -> str:
        """What `mpg import` could not convert, read from the trace root (QUARANTINE rows)."""
        return self._scratch("import-quarantine", "rows")

    def result(self, name: str) -> str:
        """What one of the pipeline's sinks wrote, for the launcher (Parquet)."""
        return f"{self.staging}/results/{name}.parquet"

    @property
    def database(self) -> str:
        """Where a local folder's new database is built, before it is renamed into place."""
        return f"{self.staging}/{DATABASE}"

    # -- the snapshot it publishes -------------------------------------------------------------

    def state(self, name: str) -> str:
        """One of the snapshot's STATE_FILES."""
        assert name in STATE_FILES, name
        return f"{STATE}/{self.run_id}/{name}.parquet"

    @property
    def snapshot(self) -> str:
        """The snapshot's own copy of what `current.json` says when it is current."""
        return f"{STATE}/{self.run_id}/snapshot.json"

    def data_file(self, table: str, day: datetime.date | None = None) -> str:
        """A published table's data file (one per table and day this run wrote)."""
        folder = f"{TABLES}/{table}/data" + ("" if day is None else f"/day={day.isoformat()}")
        return f"{folder}/{self.run_id}-0.parquet"

    def segment_id(self, bucket: int) -> str:
        """The record-store segment one bucket of this run writes."""
        return f"{self.run_id}-{self.bucket_part(bucket)}"

    # -- its record ----------------------------------------------------------------------------

    @property
    def record(self) -> str:
        return f"{RUNS}/{self.run_id}{_RECORD}"

    @property
    def log(self) -> str:
        return f"{RUNS}/{self.run_id}{_LOG}"

    @property
    def failed_validation(self) -> str:
        """The validation report of a run that a failed expectation stopped."""
        return f"{RUNS}/{self.run_id}-validation.md"


def _block(source: str, file_id: str, first_line: int) -> str:
    return f"{source}-{file_id}-{first_line:012d}"
