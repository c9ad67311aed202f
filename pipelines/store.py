"""The output folder: every path mpg uses under `--out`, and every read and write of it.

Like a Dagster IO manager, this module is the only one that knows where things live; the steps
ask it for inputs and hand it outputs. DIR is a local folder, `gs://bucket/prefix` or
`s3://bucket/prefix` (`mpg.storage`):

    current.json                       the current snapshot (`mpg.pipelines.snapshot`), written
                                       last and with a precondition: what readers start from
    mpg.duckdb                         local folders only: the current snapshot as one DuckDB file
    validation_report.md               what the expectation suites found in the current snapshot
    mpg.toml                           the folder's own configuration (optional, the user's)
    runs/<run id>.json                 one record per run, whatever became of it
    runs/<run id>.log                  its log: Beam's and the workers' (`mpg.pipelines.logs`)
    tables/<table>/metadata/...        each published table as an Apache Iceberg table
    tables/<table>/data/[day=D/]<run id>-<part>.parquet      its data files
    records/<source>/<segment>.parquet the record store: every parsed record, sorted by job
    state/<run id>/<name>.parquet      a snapshot's state: manifest, job index, segments, files
    .mpg/lock                          the lease of the run writing DIR
    .mpg/staging/<run id>/...          a run's scratch: records moving between its steps

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

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from mpg.locations import POINTER
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

# Row groups of stored records: small enough that reading some jobs skips most of a segment.
RECORD_ROW_GROUP = 32_768
_SCRATCH_OPTIONS = ipc.IpcWriteOptions(compression="lz4")


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

    @staticmethod
    def run_record(run_id: str) -> str:
        return f"{RUNS}/{run_id}.json"

    @staticmethod
    def run_log(run_id: str) -> str:
        return f"{RUNS}/{run_id}.log"

    @staticmethod
    def staging(run_id: str) -> str:
        return f"{STAGING}/{run_id}"

    @staticmethod
    def scratch(run_id: str, step: str, name: str) -> str:
        return f"{STAGING}/{run_id}/{step}/{name}.arrow"

    @staticmethod
    def segment(source: str, segment: str) -> str:
        return f"{RECORDS}/{source}/{segment}.parquet"

    @staticmethod
    def table_location(table: str) -> str:
        return f"{TABLES}/{table}"

    @staticmethod
    def data_file(
        table: str, run_id: str, day: datetime.date | None = None, part: str = "0"
    ) -> str:
        folder = f"{TABLES}/{table}/data" + ("" if day is None else f"/day={day.isoformat()}")
        return f"{folder}/{run_id}-{part}.parquet"

    @staticmethod
    def state(run_id: str, name: str) -> str:
        return f"{STATE}/{run_id}/{name}"

    # -- scratch: records between two steps of one run ----------------------------------------

    def write_scratch(self, path: str, batches: Sequence[pa.Table]) -> list[int]:
        """Each table as one record batch of one IPC file; returns the row count of each."""
        schema = batches[0].schema
        with (
            self.storage.open_output(path) as stream,
            ipc.new_file(stream, schema, options=_SCRATCH_OPTIONS) as writer,
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
        with self.storage.reporting(path), self.storage.open_input(path) as handle:
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

    def collect(self, referenced: set[str], keep_staging: str | None = None) -> int:
        """Remove every file no kept snapshot references, and every run's scratch but
        `keep_staging`'s; returns how many files went. Call with the lease held."""
        garbage = [p for p in self.files() if p not in referenced]
        self.storage.delete(garbage)
        for entry in {e.path.split("/")[2] for e in self.storage.list(STAGING)}:
            if entry != keep_staging:
                self.storage.delete_prefix(self.staging(entry))
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
