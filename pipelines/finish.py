"""The new snapshot's state, written by the pipeline's last sink; what the launcher commits.

    (FileStats, index parts, new segments, BucketUpdates, refused and recovered quarantine parts)
        | WriteSnapshotState      -> state/<run>/{manifest,jobs,segments}.parquet
                                     tables/{quarantine,record_counts,cost_rates}/data/<run>-0.parquet

`WriteSnapshotState` gathers this run's references (a row per input file, per bucket, per scratch
file; never records) into one list and merges them, in one step on one worker once every bucket
is done, with the previous snapshot's files: the manifest (a row per input file), the job index
(a row per job: the previous rows less those the buckets rewrote, plus theirs), the list of
record-store segments, the quarantine (`assemble_quarantine`) and the record counts. Every merge
streams through DuckDB or works on per-job rows. The launcher then reads back what it needs to
publish (`Staged`): the paths are `RunFiles`'.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import apache_beam as beam
import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from mpg.adapters.quarantine import read_import_quarantine
from mpg.output.manifest import finished_manifest, source_totals
from mpg.output.state_key import StateKey
from mpg.output.store import OutputStore, RunFiles
from mpg.pipelines.accounting import JOB_TABLES
from mpg.pipelines.buckets import BucketUpdate, RecordStore
from mpg.pipelines.ingest import FileStats, file_rows
from mpg.pipelines.quarantine import assemble_quarantine
from mpg.pipelines.sinks import Gather
from mpg.schemas import (
    DATA_FILES,
    JOB_INDEX,
    RECORD_COUNTS,
    SEGMENTS,
    SOURCES,
    concat,
)


@dataclass(frozen=True)
class TableChange:
    """What a run changes in one table: `added` data files replace the `days` partitions (all of
    the table when `days` is None; nothing is removed when it is empty)."""

    table: str
    added: tuple[str, ...]
    days: tuple[datetime.date, ...] | None


@dataclass(frozen=True)
class Staged:
    """A run's new snapshot, everything written but the switch."""

    run: RunFiles
    key: StateKey
    state: dict[str, str]  # manifest, jobs, segments: written
    files: pa.Table  # DATA_FILES of every table but those the publishing step writes
    changes: tuple[TableChange, ...]
    source_results: pa.Table  # VALIDATION_RESULTS of the source suites
    changed_days: tuple[tuple[str, datetime.date], ...]  # (job table, day) whose rows changed


def merge_index(
    store: OutputStore,
    previous: str | None,
    parts: list[str],
    removed: pa.Table,
    path: str,
) -> None:
    """The new JOB_INDEX at `path`: the previous rows less the jobs of `parts` (this run's rows,
    scratch files) and `removed` (jobs whose records all went), plus `parts`, by job hash."""
    fs, full = store.storage.fs, store.storage.full
    with duckdb.connect() as con:
        # This run's rows: one per job it rewrote, few (and read twice by the query).
        con.register("new", concat([store.read_scratch(p) for p in parts], JOB_INDEX))
        con.register("removed", removed.select(["job_id"]))
        query = "select * from new"
        if previous is not None:
            con.register("old", ds.dataset(full(previous), schema=JOB_INDEX, filesystem=fs))
            query += (
                " union all select * from old where job_id not in (select job_id from new)"
                " and job_id not in (select job_id from removed)"
            )
        reader = con.sql(f"{query} order by job_hash, job_id").to_arrow_reader(65_536)
        with (
            store.storage.open_output(path) as stream,
            pq.ParquetWriter(stream, JOB_INDEX, compression="zstd") as writer,
        ):
            for batch in reader:
                writer.write_batch(batch.cast(JOB_INDEX))


def index_sums(store: OutputStore, path: str) -> dict[str, int]:
    """Column sums of a job index's counts, and the live rows per segment and source."""
    columns = [f"{w}_{s}" for w in ("accepted", "duplicates", "quarantined") for s in SOURCES]
    table = store.storage.parquet_file(path).read(columns=columns)
    return {c: pc.sum(table.column(c)).as_py() or 0 for c in columns}


def live_segments(store: OutputStore, index: str, previous: pa.Table, new: pa.Table) -> pa.Table:
    """SEGMENTS still holding a job's records: of the previous ones and this run's `new` ones
    (what `WriteRecordSegments` wrote), those the job index at `index` names."""
    columns = ["segment", *[f"rows_{s}" for s in SOURCES]]
    jobs = store.storage.parquet_file(index).read(columns=columns)
    live = set()
    for source in SOURCES:
        holding = jobs.filter(pc.greater(jobs.column(f"rows_{source}"), 0))
        live |= {(seg, source) for seg in pc.unique(holding.column("segment")).to_pylist()}
    rows = [
        r for r in previous.to_pylist() + new.to_pylist() if (r["segment"], r["source"]) in live
    ]
    return pa.Table.from_pylist(sorted(rows, key=lambda r: (r["segment"], r["source"])), SEGMENTS)


def record_counts(manifest: pa.Table, sums: dict[str, int]) -> pa.Table:
    """RECORD_COUNTS: lines read and refused at parsing per file (the manifest), the rest per job
    (the index), so that read = accepted + duplicates + quarantined per source."""
    totals = source_totals(manifest)
    rows = [
        {
            "source": s,
            "records_read": totals[s][0],
            "accepted": sums[f"accepted_{s}"],
            "duplicates": sums[f"duplicates_{s}"],
            "quarantined": totals[s][1] + sums[f"quarantined_{s}"],
        }
        for s in SOURCES
    ]
    return pa.Table.from_pylist(rows, schema=RECORD_COUNTS)


def data_files_after(
    previous: pa.Table, changes: pa.Table, whole: dict[str, str | None]
) -> pa.Table:
    """DATA_FILES after a run: the previous day files less the (table, day) pairs `changes`
    replaced (an empty path: the day lost its file), plus the new ones; tables in `whole`
    replaced by their one new file (None: no rows)."""
    replaced = {(r["table"], r["day"]) for r in changes.to_pylist()}
    rows = [
        r
        for r in previous.to_pylist()
        if (r["table"], r["day"]) not in replaced and r["table"] not in whole
    ]
    rows += [r for r in changes.to_pylist() if r["path"]]
    rows += [{"table": t, "day": None, "path": p, "rows": 0} for t, p in whole.items() if p]
    rows.sort(key=lambda r: (r["table"], r["day"] or datetime.date.min, r["path"]))
    return pa.Table.from_pylist(rows, schema=DATA_FILES)


def table_changes(
    changes: pa.Table, whole: dict[str, str | None], everything: bool
) -> tuple[TableChange, ...]:
    """The Iceberg changes: per day-partitioned table, the days replaced and the files added (all
    of each table when computing `everything`); the tables of `whole` replaced by their file."""
    out = []
    for table in DAY_TABLES:
        rows = [r for r in changes.to_pylist() if r["table"] == table]
        if not rows and not everything:
            continue
        added = tuple(r["path"] for r in rows if r["path"])
        days = None if everything else tuple(sorted({r["day"] for r in rows}))
        out.append(TableChange(table, added, days))
    out += [TableChange(t, (p,) if p else (), None) for t, p in whole.items()]
    return tuple(out)


# The tables partitioned by day, which a run changes day by day.
DAY_TABLES = (*JOB_TABLES, "goodput_by_slice", "chip_time_cost")


@dataclass(frozen=True)
class StatePlan:
    """What the new state is merged from beside this run's references: the previous snapshot's
    files, and what the launcher decided."""

    records: RecordStore  # the run, the previous job index, the retracted input files
    kept: pa.Table  # MANIFEST rows of the files ingested before and unchanged since
    segments: str | None  # the previous SEGMENTS file
    quarantine: str | None  # the previous quarantine data file
    removed: pa.Table  # (job_hash, job_id): the jobs retracted files fed
    traces: str  # the trace root: `mpg import`'s quarantine is read from it, whole, every run
    rates: pa.Table  # COST_RATES of this run

    @property
    def run(self) -> RunFiles:
        return self.records.run


def _write_manifest(stats: list[FileStats], plan: StatePlan) -> pa.Table:
    manifest = finished_manifest(plan.kept, file_rows(stats))
    plan.run.store.write_parquet(manifest, plan.run.state("manifest"))
    return manifest


def _write_index(parts: list[str], plan: StatePlan) -> str:
    path = plan.run.state("jobs")
    merge_index(plan.run.store, plan.records.index, sorted(parts), plan.removed, path)
    return path


def _write_segments(new: list[dict[str, object]], plan: StatePlan, index: str) -> None:
    store = plan.run.store
    previous = SEGMENTS.empty_table()
    if plan.segments is not None:
        previous = store.read_parquet(plan.segments, SEGMENTS)
    segments = live_segments(store, index, previous, pa.Table.from_pylist(new, schema=SEGMENTS))
    store.write_parquet(segments, plan.run.state("segments"))


def _read_import_quarantine(traces: str, run: RunFiles) -> tuple[str | None, pa.Table]:
    """What `mpg import` could not convert, to scratch (its path, None if nothing), and its
    RECORD_COUNTS row."""
    imported = read_import_quarantine(traces)
    if not imported.rows.num_rows:
        return None, imported.counts
    run.store.write_scratch(run.import_quarantine, [imported.rows])
    return run.import_quarantine, imported.counts


def _reconciled_jobs(store: OutputStore, jobs: list[str]) -> pa.Table:
    """The jobs whose refusals this run decided again (every accounted job of every bucket),
    from the buckets' jobs scratch files."""
    ids = []
    for path in sorted(jobs):
        rows = store.read_scratch(path)
        ids.append(rows.filter(rows.column("accounted")).select(["job_id"]))
    return pa.concat_tables(ids) if ids else JOB_INDEX.empty_table().select(["job_id"])


def _write_quarantine(
    plan: StatePlan,
    refused: list[str],
    recovered: list[str],
    updates: list[BucketUpdate],
    imported: str | None,
) -> None:
    """The quarantine table (none when it has no rows): the previous one's rows merged with the
    lines refused at parsing (`refused`), the records refused when reconciling, with their text
    (`recovered`), and `mpg import`'s (`imported`)."""
    store, path = plan.run.store, plan.run.data_file("quarantine")
    parts = [*sorted(refused), *sorted(recovered), *([imported] if imported else [])]
    reconciled = _reconciled_jobs(store, [u.jobs for u in updates])
    retracted = plan.records.retracted
    if not assemble_quarantine(store, plan.quarantine, retracted, reconciled, parts, path):
        store.storage.delete([path])


def write_state(refs: list[tuple[str, object]], plan: StatePlan) -> None:
    """Every state file and whole table of the new snapshot, from this run's references
    (`WriteSnapshotState`'s inputs, each as (kind, reference)), in order: each merge that needs
    another's file finds it written."""
    kinds: dict[str, list] = {kind: [] for kind in _KINDS}
    for kind, ref in refs:
        kinds[kind].append(ref)
    run = plan.run
    manifest = _write_manifest(kinds["files"], plan)
    index = _write_index(kinds["index"], plan)
    _write_segments(kinds["segments"], plan, index)
    imported, import_counts = _read_import_quarantine(plan.traces, run)
    _write_quarantine(plan, kinds["refused"], kinds["recovered"], kinds["updates"], imported)
    sums = index_sums(run.store, index)
    counts = concat([record_counts(manifest, sums), import_counts], RECORD_COUNTS)
    run.store.write_parquet(counts, run.data_file("record_counts"))
    run.store.write_parquet(plan.rates, run.data_file("cost_rates"))


# What WriteSnapshotState gathers: FileStats; scratch files of JOB_INDEX rows; SEGMENTS rows of
# the new segments; BucketUpdates (their jobs' scratch files); scratch files of QUARANTINE rows.
_KINDS = ("files", "index", "segments", "updates", "refused", "recovered")


def _tagged(ref: object, kind: str) -> tuple[str, object]:
    return kind, ref


class WriteSnapshotState(beam.PTransform):
    """{kind: PCollection of references} (`_KINDS`) -> the new snapshot's state files and its
    whole tables (quarantine, record_counts, cost_rates), at `RunFiles`' paths: every reference
    gathered in one list (a row per input file or bucket, never records), then written in one
    step."""

    def __init__(self, plan: StatePlan) -> None:
        super().__init__()
        self._plan = plan

    def expand(self, refs: dict) -> None:
        assert set(refs) == set(_KINDS), sorted(refs)
        tagged = [refs[k] | f"Tag-{k}" >> beam.Map(_tagged, k) for k in _KINDS]
        _ = (
            tagged
            | "References" >> beam.Flatten()
            | "Gather" >> Gather()
            | "WriteState" >> beam.Map(write_state, self._plan)
        )
