"""The quarantine: every record that could not be used, with its file, line, reason and text.

Two kinds of record end up there. Lines the parser refuses (bad JSON, a wrong type, ...) are
written with their text by `mpg.pipelines.ingest`. Records refused later, when a job's records are
reconciled (unknown job, conflicting lifecycle event), are only references at first (raw text never
crosses a shuffle): `RecoverQuarantinedText` reads each input file that such references point
into once, after grouping them by file, and keeps the previous snapshot's text where the file has
not changed since.

The table itself is rebuilt at the end of the pipeline by the state sink (`WriteSnapshotState`,
`mpg.pipelines.finish`, with `assemble_quarantine`): the previous rows, less those of retracted
files and those of the jobs reconciled again, plus this run's. It streams through DuckDB and one
Parquet writer, so it costs the quarantine's size, not the fleet's, and memory stays bounded
whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import apache_beam as beam
import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from mpg.adapters.quarantine import IMPORT_SOURCE
from mpg.output.store import OutputStore, RunFiles
from mpg.pipelines.io import TraceFile, recover_raw_text, stable_id
from mpg.schemas import QUARANTINE, QUARANTINE_REF, TABLE_KEYS, concat, conform

_ORDER = [(k, "ascending") for k in TABLE_KEYS["quarantine"]]


@dataclass(frozen=True)
class QuarantineSources:
    """Where the text of refused records comes from."""

    run: RunFiles
    files: dict[str, TraceFile]  # every input file, by name
    previous: str | None  # the previous snapshot's quarantine data file
    unchanged: frozenset[str]  # input files ingested before and not changed since


def _files_referenced(path: str, store: OutputStore) -> Iterator[tuple[str, str]]:
    refs = store.read_scratch(path)
    for name in pc.unique(refs.column("file")).to_pylist():
        yield name, path


def recover_file(element: tuple[str, Iterable[str]], sources: QuarantineSources) -> str | None:
    """One input file's refused records with their text; returns the scratch file written."""
    name, paths = element
    store = sources.run.store
    refs = concat((store.read_scratch(p) for p in sorted(set(paths))), QUARANTINE_REF)
    refs = refs.filter(pc.equal(refs.column("file"), name))
    known = _previous_text(sources, name)
    key = ["source", "file", "line", "reason"]
    found = refs.join(known, keys=key, join_type="inner", right_suffix="_old")
    missing = refs.join(known.select(key), keys=key, join_type="left anti")
    rows = [conform(found.drop_columns(["job_id_old"]), QUARANTINE)]
    if missing.num_rows:
        missing = missing.sort_by([("line", "ascending")])
        rows.append(recover_raw_text(sources.files[name], missing))
    out = sources.run.recovered(stable_id(name))
    store.write_scratch(out, [concat(rows, QUARANTINE).sort_by(_ORDER)])
    return out


def _previous_text(sources: QuarantineSources, name: str) -> pa.Table:
    """The previous snapshot's quarantine rows of input file `name`, if it has not changed."""
    if sources.previous is None or name not in sources.unchanged:
        return QUARANTINE.empty_table()
    storage = sources.run.store.storage
    dataset = ds.dataset(
        storage.full(sources.previous),
        filesystem=storage.fs,
        format="parquet",
    )
    return dataset.to_table(filter=ds.field("file") == name).cast(QUARANTINE)


class RecoverQuarantinedText(beam.PTransform):
    """Scratch files of quarantine references (one per bucket) -> scratch files of quarantine
    rows with their text, one per input file referenced."""

    def __init__(self, sources: QuarantineSources) -> None:
        super().__init__()
        self._sources = sources

    def expand(self, paths):
        return (
            paths
            | "FilesReferenced" >> beam.FlatMap(_files_referenced, self._sources.run.store)
            | "GroupByFile" >> beam.GroupByKey()
            | "RecoverText" >> beam.Map(recover_file, self._sources)
        )


def assemble_quarantine(
    store: OutputStore,
    previous: str | None,
    retracted: Iterable[str],
    reconciled_jobs: pa.Table,
    new_parts: list[str],
    path: str,
) -> int:
    """Write the run's quarantine table to `path`: the previous rows (`previous`, a data file)
    less those of `retracted` files, of `reconciled_jobs` (their refusals were decided again) and
    of the import quarantine (read whole again every run), plus this run's parts (scratch files).
    Returns the rows written."""
    fs, full = store.storage.fs, store.storage.full
    with duckdb.connect() as con:
        con.execute("SET threads = 1")
        con.register("retracted", pa.table({"file": pa.array(sorted(retracted), pa.string())}))
        con.register("reconciled", reconciled_jobs.select(["job_id"]))
        parts = [con.from_arrow(store.scratch_reader(new_parts, QUARANTINE))] if new_parts else []
        if previous is not None:
            old = con.from_arrow(ds.dataset(full(previous), filesystem=fs, format="parquet"))
            con.register("old", old)
            parts.append(
                con.sql(
                    "select * from old where file not in (select file from retracted) "
                    "and (job_id is null or job_id not in (select job_id from reconciled)) "
                    f"and source <> '{IMPORT_SOURCE}'"
                )
            )
        if not parts:
            return 0
        union = parts[0]
        for part in parts[1:]:
            union = union.union(part)
        rows = union.select(*[f'"{c}"' for c in QUARANTINE.names]).order(
            ", ".join(f'"{k}"' for k in TABLE_KEYS["quarantine"])
        )
        reader = rows.to_arrow_reader(65_536)
        total = 0
        with (
            store.storage.open_output(path) as stream,
            pq.ParquetWriter(stream, QUARANTINE, compression="zstd") as writer,
        ):
            for batch in reader:
                writer.write_batch(batch.cast(QUARANTINE))
                total += batch.num_rows
    return total
