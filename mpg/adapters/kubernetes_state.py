"""What earlier `mpg import kubernetes` runs into a trace root saw, kept under
`ROOT/.import/kubernetes/`, so that importing a day after another equals importing both at once.

A Workload's history is spread over exports: its evictions in yesterday's events, its end in
today's snapshot. Converting each import alone would quarantine today's half ("schedulingStats
counts 1 evictions, the input shows 0") and leave yesterday's records of a job that has since
ended. So every import re-reads the records earlier imports kept, with its own input, and
derives every Workload's records again from all of them (docs/adapters/kubernetes.md,
"Importing day after day"). The state is:

- `records.parquet`: each distinct record (its raw text; the file and line it was first read
  from; `malformed`, the problem of a value that is not JSON) that may still matter: those of
  open Workloads, of Workloads that ended less than `--keep-days` before the newest data, and
  those of no Workload yet that are that recent;
- `settled.parquet`: quarantine rows that can no longer change (a record unusable in itself, or
  of a Workload no longer kept), written again by every import;
- `sealed.parquet`: the Workloads (`namespace`, `name`, `uid`) whose records are final: ended
  more than `--keep-days` before the newest data; a later snapshot or event of one changes
  nothing (it is counted as ignored);
- `state.json`: the newest end of data seen (`stop`), and the batches (jobs) written, so that
  one no longer converted has its files removed.

It is written to a new folder that then replaces the old one, so a killed import leaves the
previous state (and the next import, deriving from it, rewrites any file left half done).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from mpg.adapters.canonical import QUARANTINE_SCHEMA

FOLDER = Path(".import") / "kubernetes"
VERSION = 1
RECORDS = {"file": pl.String, "line": pl.Int64, "raw": pl.String, "malformed": pl.String}
SEALED = {"namespace": pl.String, "name": pl.String, "uid": pl.String}


@dataclass(frozen=True)
class ImportState:
    records: pl.DataFrame  # RECORDS
    settled: pl.DataFrame  # QUARANTINE_SCHEMA
    sealed: pl.DataFrame  # SEALED
    stop: datetime | None
    written: frozenset[str]

    @staticmethod
    def empty() -> ImportState:
        return ImportState(
            records=pl.DataFrame(schema=RECORDS),
            settled=pl.DataFrame(schema=QUARANTINE_SCHEMA),
            sealed=pl.DataFrame(schema=SEALED),
            stop=None,
            written=frozenset(),
        )


def load_state(root: Path) -> ImportState:
    """The state under `root`, or an empty one for a root no import of this format wrote."""
    folder = root / FOLDER
    if not folder.is_dir():
        previous = folder.with_name(folder.name + ".old")  # an import killed mid-swap
        if not previous.is_dir():
            return ImportState.empty()
        folder = previous
    meta = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    if meta.get("version") != VERSION:
        raise ValueError(f"{folder}: import state version {meta.get('version')}, not {VERSION}")
    stop = meta.get("stop")
    return ImportState(
        records=pl.read_parquet(folder / "records.parquet").cast(RECORDS),
        settled=pl.read_parquet(folder / "settled.parquet").cast(QUARANTINE_SCHEMA),
        sealed=pl.read_parquet(folder / "sealed.parquet").cast(SEALED),
        stop=None if stop is None else datetime.fromisoformat(stop),
        written=frozenset(meta.get("written", [])),
    )


def save_state(root: Path, state: ImportState) -> None:
    """Replaces the state under `root` with `state`, all files at once."""
    folder = root / FOLDER
    fresh = folder.with_name(folder.name + ".new")
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    state.records.write_parquet(fresh / "records.parquet", compression="zstd")
    state.settled.write_parquet(fresh / "settled.parquet", compression="zstd")
    state.sealed.write_parquet(fresh / "sealed.parquet", compression="zstd")
    meta = {
        "version": VERSION,
        "stop": None if state.stop is None else state.stop.isoformat(),
        "written": sorted(state.written),
    }
    (fresh / "state.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    if folder.is_dir():
        shutil.rmtree(old, ignore_errors=True)
        folder.rename(old)
    fresh.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
