"""Hand-made published folders: rows written by a test into the published tables' DDL, laid out so
that `mpg.output.published.open_published` reads them as it reads a run's output.

A reader starts from `DIR/current.json` (the current snapshot) and opens `DIR/mpg.duckdb` when the
file holds that snapshot's run (its `runs` table names it, published). So a folder of hand-made
rows is: every published table created from `mpg.schemas` (empty unless given), one `runs` row,
the macros, the `*_current` views and the analysts' views as `mpg run` creates them, and a pointer
naming that run. Tests of numbers worked out by hand (compare, views, report, explain) use it, so
that what they read goes through the same door as a user's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa

from mpg.output.database import new_database
from mpg.output.snapshot import Snapshot
from mpg.output.state_key import StateKey
from mpg.output.store import POINTER
from mpg.schemas import PUBLISHED

RUN_ID = "20260101T000000000000Z-handmade"


def _run_row(versions: Sequence[str]) -> dict:
    at = dt.datetime(2026, 1, 3, tzinfo=dt.UTC)
    return {
        "run_id": RUN_ID, "started_at": at, "ended_at": at, "outcome": "published",
        "message": None, "traces": "handmade", "input_files": 0, "input_bytes": 0,
        "inputs_fingerprint": "", "code_version": "handmade", "metric_versions": list(versions),
        "counts": [], "command": "run",
    }  # fmt: skip


def publish_rows(
    out: Path,
    rows: Mapping[str, Sequence[dict] | pa.Table],
    current_version: str = "v1",
    versions: Sequence[str] = ("v1",),
) -> Path:
    """`out` as a published folder holding `rows` (table name -> rows) and nothing else; returns
    `out`. The database is made as `mpg run` makes it (`new_database`: every table, the views
    showing `current_version`), then filled."""
    out.mkdir(parents=True, exist_ok=True)
    with new_database(str(out / "mpg.duckdb"), current_version) as con:
        for name, schema in PUBLISHED.items():
            given = rows.get(name, [] if name != "runs" else [_run_row(versions)])
            table = given if isinstance(given, pa.Table) else pa.Table.from_pylist(given, schema)
            if table.num_rows:
                con.from_arrow(table.select(schema.names).cast(schema)).insert_into(name)
    key = StateKey(
        code_version="handmade",
        metric_versions=tuple(versions),
        current_metric_version=current_version,
    )
    pointer = Snapshot(run_id=RUN_ID, key=key, tables={}, state={})
    (out / POINTER).write_bytes(pointer.encode())
    return out
