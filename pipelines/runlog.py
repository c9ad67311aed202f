"""The run log: one JSON record per `mpg run` under `DIR/runs/`, whatever became of the run.

A run writes its record when it starts (outcome `running`) and again when it ends (`published`
or `failed`, with the message). A run killed outright cannot write its end: the next run, which
holds the folder's lock and so knows nobody else is alive, marks such records `interrupted`.
Each published snapshot carries the log as of its publication in its `runs` table; the JSON files
stay the complete record, failed runs included. Records are written to a temporary name and
renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from mpg.pipelines.io import TraceFile
from mpg.schemas import RUNS
from mpg.version import code_version


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def new_run_id(started: datetime.datetime) -> str:
    """Sortable by start time (snapshots are pruned by this order), unique by its random tail."""
    return f"{started:%Y%m%dT%H%M%S%fZ}-{uuid.uuid4().hex[:6]}"


def fingerprint(files: list[TraceFile]) -> tuple[int, str]:
    """Total bytes and a digest of the inputs' names, sizes and modification times."""
    digest = hashlib.sha256()
    total = 0
    for f in files:
        stat = Path(f.path).stat()
        total += stat.st_size
        digest.update(f"{f.name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return total, digest.hexdigest()[:16]


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
        traces: Path | None,
        files: list[TraceFile],
        metric_versions: tuple[str, ...],
        command: str = "run",
    ) -> RunRecord:
        started = _now()
        total, digest = fingerprint(files)
        return cls(
            run_id=new_run_id(started),
            started_at=started,
            traces="" if traces is None else str(traces),
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


def _write_json(runs: Path, fields: dict[str, object]) -> None:
    runs.mkdir(parents=True, exist_ok=True)
    temporary = runs / f".{fields['run_id']}.json.tmp"
    try:
        temporary.write_text(json.dumps(fields, indent=2, sort_keys=True) + "\n")
    except OSError as exc:  # a full disk fails the write without naming the file
        raise OSError(exc.errno, exc.strerror, str(temporary)) from exc
    temporary.replace(runs / f"{fields['run_id']}.json")


def write_record(runs: Path, record: RunRecord) -> None:
    fields = dataclasses.asdict(record)
    for name in ("started_at", "ended_at"):
        fields[name] = fields[name].isoformat() if fields[name] else None
    _write_json(runs, fields)


def read_records(runs: Path) -> list[dict[str, object]]:
    """Every run record, oldest first (run ids sort by start time)."""
    if not runs.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(runs.glob("*.json"))]


def settle_unfinished(runs: Path, published: set[str]) -> None:
    """Records still `running` belong to runs that died: call only with the folder's lock held.

    A run killed after switching to its snapshot but before recording its end did publish (its
    snapshot's `runs` table says so); any other is `interrupted`.
    """
    for fields in read_records(runs):
        if fields["outcome"] != "running":
            continue
        if fields["run_id"] in published:
            fields["outcome"] = "published"
        else:
            fields["outcome"] = "interrupted"
            fields["message"] = "the process ended before the run finished (killed or crashed)"
        _write_json(runs, fields)


def runs_table(runs: Path, current: RunRecord) -> pa.Table:
    """The `runs` table: the log on disk with `current` (not yet written as ended) in its place."""
    rows = [r for r in read_records(runs) if r["run_id"] != current.run_id]
    for row in rows:
        row.setdefault("command", "run")  # records written before runs had a command
    rows.append(dataclasses.asdict(current))
    for row in rows:
        for name in ("started_at", "ended_at"):
            if isinstance(row[name], str):
                row[name] = datetime.datetime.fromisoformat(row[name])
    return pa.Table.from_pylist(rows, schema=RUNS)
