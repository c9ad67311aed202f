"""The run log: one JSON record per `mpg run` under `DIR/runs/`, whatever became of the run.

A run writes its record when it starts (outcome `running`) and again when it ends (`published`
or `failed`, with the message). A run killed outright cannot write its end: the next run, which
holds the folder's lease and so knows nobody else is alive, marks such records `interrupted`.
Each published snapshot carries the log as of its publication in its `runs` table; the JSON files
stay the complete record, failed runs included. Each record is written whole (`mpg.storage`), so
a reader never sees half of one.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from mpg.core.version import code_version
from mpg.output.store import OutputStore
from mpg.schemas import RUNS

if TYPE_CHECKING:  # the listing's description of an input file: only its fields are read
    from mpg.pipelines.io import TraceFile


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def new_run_id(started: datetime.datetime) -> str:
    """Sortable by start time (snapshots are pruned by this order), unique by its random tail."""
    return f"{started:%Y%m%dT%H%M%S%fZ}-{uuid.uuid4().hex[:6]}"


def fingerprint(files: list[TraceFile]) -> tuple[int, str]:
    """Total bytes and a digest of the inputs' names, sizes and modification times."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.name}\0{f.size}\0{f.mtime_ns}\n".encode())
    return sum(f.size for f in files), digest.hexdigest()[:16]


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    started_at: datetime.datetime
    traces: str
    input_files: int
    input_bytes: int
    inputs_fingerprint: str
    metric_versions: tuple[str, ...]
    code_version: str = dataclasses.field(default_factory=code_version)
    outcome: str = "running"
    ended_at: datetime.datetime | None = None
    message: str | None = None
    counts: tuple[dict[str, object], ...] | None = None
    command: str = "run"  # or "backfill v2 2026-11-01..2026-11-30"

    @classmethod
    def start(
        cls,
        traces: str | None,
        files: list[TraceFile],
        metric_versions: tuple[str, ...],
        command: str = "run",
    ) -> RunRecord:
        started = _now()
        total, digest = fingerprint(files)
        return cls(
            run_id=new_run_id(started),
            started_at=started,
            traces=traces or "",
            input_files=len(files),
            input_bytes=total,
            inputs_fingerprint=digest,
            metric_versions=metric_versions,
            command=command,
        )

    def ended(
        self, outcome: str, message: str | None = None, counts: pa.Table | None = None
    ) -> RunRecord:
        return dataclasses.replace(
            self,
            outcome=outcome,
            ended_at=_now(),
            message=message,
            counts=tuple(counts.to_pylist()) if counts is not None else self.counts,
        )


def _write_json(store: OutputStore, fields: dict[str, object]) -> None:
    text = json.dumps(fields, indent=2, sort_keys=True) + "\n"
    store.storage.write_text(store.run(str(fields["run_id"])).record, text)


def write_record(store: OutputStore, record: RunRecord) -> None:
    fields = dataclasses.asdict(record)
    for name in ("started_at", "ended_at"):
        fields[name] = fields[name].isoformat() if fields[name] else None
    _write_json(store, fields)


def read_records(store: OutputStore) -> list[dict[str, object]]:
    """Every run record, oldest first (run ids sort by start time)."""
    return [json.loads(store.storage.read_text(p)) for p in store.run_files()[0]]


def settle_unfinished(store: OutputStore, published: set[str]) -> None:
    """Records still `running` belong to runs that died: call only with the folder's lock held.

    A run killed after switching to its snapshot but before recording its end did publish (its
    snapshot's `runs` table says so); any other is `interrupted`.
    """
    for fields in read_records(store):
        if fields["outcome"] != "running":
            continue
        if fields["run_id"] in published:
            fields["outcome"] = "published"
        else:
            fields["outcome"] = "interrupted"
            fields["message"] = "the process ended before the run finished (killed or crashed)"
        _write_json(store, fields)


# Run records kept as files beside the `runs` table; older ones live in the table alone.
KEPT_RECORDS = 10


def runs_table(store: OutputStore, current: RunRecord, published: pa.Table) -> pa.Table:
    """The `runs` table: the previous snapshot's (`published`, RUNS), updated by the records on
    disk, with `current` (not yet written as ended) in its place; oldest first."""
    on_disk = {r["run_id"]: r for r in read_records(store)}
    on_disk.pop(current.run_id, None)
    rows = [r for r in published.to_pylist() if r["run_id"] not in on_disk]
    for row in on_disk.values():
        row.setdefault("command", "run")  # records written before runs had a command
        rows.append(row)
    rows.append(dataclasses.asdict(current))
    for row in rows:
        for name in ("started_at", "ended_at"):
            if isinstance(row[name], str):
                row[name] = datetime.datetime.fromisoformat(row[name])
    rows.sort(key=lambda r: r["run_id"])
    return pa.Table.from_pylist(rows, schema=RUNS)


def prune_records(store: OutputStore, published: pa.Table) -> None:
    """Remove the files of run records that a published `runs` table holds, all but the newest
    KEPT_RECORDS: every run stays on record (in the table) without a file per run forever. Run
    logs (`<run id>.log`) go the same way: those of the newest KEPT_RECORDS runs stay."""
    held = {store.run(r).record for r in published.column("run_id").to_pylist()}
    records, logs = store.run_files()
    old = records[:-KEPT_RECORDS] if len(records) > KEPT_RECORDS else []
    old_logs = logs[:-KEPT_RECORDS] if len(logs) > KEPT_RECORDS else []
    store.storage.delete([p for p in old if p in held] + old_logs)
