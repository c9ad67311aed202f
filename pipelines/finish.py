"""After the pipeline: the new snapshot's state, from what the pipeline's sinks wrote.

The launcher merges small things only: the manifest (a row per input file), the job index (a row
per job: the previous rows less those the buckets rewrote, plus theirs), the list of record-store
segments, the quarantine (`assemble_quarantine`) and the record counts. Every merge streams
through DuckDB or works on per-job rows, never on records.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from mpg.pipelines.accounting import JOB_TABLES
from mpg.pipelines.iceberg import TableChange
from mpg.pipelines.manifest import source_totals
from mpg.pipelines.state_key import StateKey
from mpg.pipelines.store import OutputStore, RunFiles
from mpg.schemas import DATA_FILES, JOB_INDEX, RECORD_COUNTS, SEGMENTS, SOURCES, concat


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
