"""What a reader of an output folder can see, as digests: to compare two folders exactly."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mpg.output.published import open_published
from mpg.output.snapshot import read_current
from mpg.output.store import OutputStore
from mpg.schemas import DATA_FILES, PUBLISHED, TABLE_KEYS

# Differ between runs by design: the run log (ids, times), and the source suites' results, which
# describe the records each run reconciled (all of them on a first run, the changed jobs after).
PER_RUN = ("runs", "validation_results")


def published_state(out: str | Path, skip: tuple[str, ...] = ("runs",)) -> dict[str, str]:
    """Every published byte a reader can see, from the current snapshot: each data file's digest
    by table and day (file names carry run ids, contents must not), and each table's rows in
    key order. Tables named in `skip` are left out.

    The files and the tables are read in two steps, each from the snapshot current then: a run
    that switches between them would give a mix, so the whole read is repeated until the
    current snapshot stayed the same throughout."""
    while True:
        before = current_run(out)
        state = _state(out, skip)
        if current_run(out) == before:
            return state


def _state(out: str | Path, skip: tuple[str, ...]) -> dict[str, str]:
    store = OutputStore(str(out))
    snapshot, _ = read_current(store)
    assert snapshot is not None
    files = store.read_parquet(snapshot.state["files"], DATA_FILES).to_pylist()
    state = {
        f"{f['table']}/{f['day']}": hashlib.sha256(store.storage.read_bytes(f["path"])).hexdigest()
        for f in files
        if f["table"] not in skip
    }
    with open_published(out) as con:
        for table in PUBLISHED:
            if table not in skip:
                order = ", ".join(f'"{k}" nulls first' for k in TABLE_KEYS.get(table, ())) or "1"
                rows = repr(con.sql(f"select * from {table} order by {order}").fetchall())
                state[f"table {table}"] = hashlib.sha256(rows.encode()).hexdigest()
    return state


def current_run(out: str | Path) -> str:
    """The run whose snapshot is current."""
    snapshot, _ = read_current(OutputStore(str(out)))
    assert snapshot is not None
    return snapshot.run_id
