"""Reading some jobs' records back from a snapshot's record store, outside a run.

`mpg explain` shows one job's records, `mpg report` its worst jobs' owners, `mpg backfill`
accounts jobs again: each finds a job's segment in the job index (sorted by job hash, so one
job's row is a ranged read) and reads the job's rows from it, then reconciles them with the
pipeline's own function, so a reader sees exactly the records the run accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from mpg.output.snapshot import Snapshot
from mpg.output.store import OutputStore
from mpg.schemas import JOB_INDEX, SOURCES, STORED_SCHEMAS, concat
from mpg.transforms.reconcile import JobRecords, job_hash_of, reconcile_jobs


def index_rows(store: OutputStore, snapshot: Snapshot, job_ids: Iterable[str]) -> pa.Table:
    """The JOB_INDEX rows of some jobs (those the snapshot knows)."""
    ids = pa.array(sorted(set(job_ids)), pa.string())
    if not len(ids):
        return JOB_INDEX.empty_table()
    dataset = ds.dataset(
        store.storage.full(snapshot.state["jobs"]),
        schema=JOB_INDEX,
        filesystem=store.storage.fs,
    )
    hashes = pc.unique(job_hash_of(ids))
    wanted = ds.field("job_hash").isin(hashes) & ds.field("job_id").isin(ids)
    return dataset.to_table(filter=wanted)


def stored_records(store: OutputStore, jobs: pa.Table) -> dict[str, pa.Table]:
    """Every parsed record (STORED_SCHEMAS) of the jobs of some JOB_INDEX rows."""
    tables = {}
    for source in SOURCES:
        parts = []
        for row in jobs.to_pylist():
            if not row[f"rows_{source}"]:
                continue
            path = store.segment(source, row["segment"])
            h = row["job_hash"]
            rows = store.read_hash_range(path, STORED_SCHEMAS[source], h, h + 1)
            parts.append(rows.filter(pc.equal(rows.column("job_id"), row["job_id"])))
        tables[source] = concat(parts, STORED_SCHEMAS[source])
    return tables


def accepted_records(store: OutputStore, snapshot: Snapshot, job_ids: Iterable[str]) -> JobRecords:
    """The accepted records of some jobs, as the run that published `snapshot` accepted them."""
    stored = stored_records(store, index_rows(store, snapshot, job_ids))
    return reconcile_jobs({s: stored[s].drop_columns(["job_hash"]) for s in SOURCES}).records


def end_of_data(store: OutputStore, snapshot: Snapshot) -> tuple[int | None, str | None]:
    """The snapshot's end of data (epoch µs: the latest accepted scheduler ts or span end) and
    a job whose records reach it."""
    table = store.storage.parquet_file(snapshot.state["jobs"]).read(columns=["job_id", "data_end"])
    ends = table.column("data_end").cast(pa.int64())
    latest = pc.max(ends).as_py()
    if latest is None:
        return None, None
    at = pc.index(ends, latest).as_py()
    return int(latest), table.column("job_id")[at].as_py()


def segment_records(store: OutputStore, snapshot: Snapshot) -> Iterator[JobRecords]:
    """Every accepted record of the snapshot, one segment's jobs at a time (bounded memory)."""
    index = store.storage.parquet_file(snapshot.state["jobs"]).read(columns=["job_id", "segment"])
    for segment in sorted(pc.unique(index.column("segment")).to_pylist()):
        jobs = index.filter(pc.equal(index.column("segment"), segment)).column("job_id")
        stored = {}
        for source in SOURCES:
            path = store.segment(source, segment)
            schema = STORED_SCHEMAS[source]
            rows = store.read_parquet(path, schema) if store.storage.exists(path) else None
            rows = schema.empty_table() if rows is None else rows
            stored[source] = rows.filter(pc.is_in(rows.column("job_id"), jobs)).drop_columns(
                ["job_hash"]
            )
        yield reconcile_jobs(stored).records
