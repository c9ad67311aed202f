"""What a reader of an output folder can see, as digests: to compare two folders exactly."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

# Differ between runs by design: the run log (ids, times), and the source suites' results, which
# describe the records each run reconciled (all of them on a first run, the touched buckets after).
PER_RUN = ("runs", "validation_results")


def published_state(out: Path, skip: tuple[str, ...] = ("runs",)) -> dict[str, str]:
    """Every published byte a reader can see, resolved through `current` once (as a careful reader
    does): file digests under tables/ and records/, and each table's rows in stored order.
    Tables named in `skip` are left out, as are their Parquet files."""
    current = (out / ".mpg" / "current").resolve()
    state = {
        str(p.relative_to(current)): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in ("tables", "records")
        for p in sorted((current / folder).rglob("*"))
        if p.is_file() and not any(f"tables/{t}/" in str(p) for t in skip)
    }
    with duckdb.connect(str(current / "mpg.duckdb"), read_only=True) as con:
        for (table,) in con.execute("select table_name from duckdb_tables()").fetchall():
            if table not in skip:
                rows = repr(con.table(table).fetchall()).encode()
                state[f"table {table}"] = hashlib.sha256(rows).hexdigest()
    return state
