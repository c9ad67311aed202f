"""Incremental runs: a fleet fed file by file, in random orders, always publishes exactly what one
run over the same files publishes; running again changes nothing; files that change or vanish are
retracted; late files restate earlier days.

The fleet is simulated, then its files are cut into small pieces (whole lines), so that each run
adds a few pieces of some days and sources, in an order no scheduler would choose: spans before
their job's submit, an attempt's end days after its steps.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from mpg.pipelines.options import RunOptions
from mpg.pipelines.result import RunResult
from mpg.pipelines.run import run
from mpg.simulate import simulate
from tests.snapshots import PER_RUN, current_run, published_state
from tests.timeline import end, schedule, span, submit

BUCKETS = 16  # more buckets than a piece's jobs touch: untouched buckets are kept as they were
LINES_PER_PIECE = 1000  # ~16 pieces: each a run of its own, and a recompute after it


def _lines(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.splitlines(keepends=True)


@pytest.fixture(scope="module")
def pieces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated fleet (with duplicates, malformed lines, restarts) cut into pieces."""
    fleet = tmp_path_factory.mktemp("fleet")
    simulate(seed=5, jobs=14, days=3, out=fleet)
    cut = tmp_path_factory.mktemp("pieces")
    for path in sorted(fleet.glob("*/*.jsonl*")):
        lines = _lines(path)
        stem = path.name.split(".")[0]
        for k in range(0, len(lines), LINES_PER_PIECE):
            piece = cut / path.parent.name / f"{stem}-{k // LINES_PER_PIECE:03d}.jsonl"
            piece.parent.mkdir(exist_ok=True)
            piece.write_bytes(b"".join(lines[k : k + LINES_PER_PIECE]))
    return cut


def _names(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.glob("*/*.jsonl"))


def _update(traces: Path, out: Path, full: bool = False) -> RunResult:
    return run(RunOptions(traces=str(traces), out=str(out), buckets=BUCKETS, full=full))


def _recomputed(traces: Path, tmp: Path) -> dict[str, str]:
    """What one run over `traces` into a fresh folder publishes."""
    out = tmp / f"full-{random.random()}"
    _update(traces, out)
    state = published_state(out, skip=PER_RUN)
    shutil.rmtree(out)
    return state


def _add(pieces: Path, traces: Path, names: list[str]) -> None:
    for name in names:
        (traces / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pieces / name, traces / name)


def test_a_fleet_fed_piece_by_piece_equals_one_run_over_it_after_every_step(
    pieces: Path, tmp_path: Path
) -> None:
    names = _names(pieces)
    random.Random(1).shuffle(names)
    traces, out = tmp_path / "traces", tmp_path / "out"
    (traces / "scheduler").mkdir(parents=True)
    step = 0
    while step < len(names):
        batch = names[step : step + 1 + step % 3]  # one, two or three pieces at a time
        step += len(batch)
        _add(pieces, traces, batch)
        result = _update(traces, out)
        assert result.parsed == len(batch)
        assert published_state(out, skip=PER_RUN) == _recomputed(traces, tmp_path), step


@pytest.mark.parametrize("seed", [2, 3])
def test_any_order_and_grouping_ends_where_one_run_does(
    seed: int, pieces: Path, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    names = _names(pieces)
    rng.shuffle(names)
    traces, out = tmp_path / "traces", tmp_path / "out"
    while names:
        k = rng.randint(1, 6)
        batch, names = names[:k], names[k:]
        _add(pieces, traces, batch)
        _update(traces, out)
    assert published_state(out, skip=PER_RUN) == _recomputed(traces, tmp_path)


def test_changed_and_removed_files_are_retracted(pieces: Path, tmp_path: Path) -> None:
    traces, out = tmp_path / "traces", tmp_path / "out"
    names = _names(pieces)
    _add(pieces, traces, names)
    _update(traces, out)
    grown, gone = traces / names[0], traces / names[-1]
    lines = _lines(grown)
    grown.write_bytes(b"".join(lines[: len(lines) // 2]))  # rewritten shorter
    gone.unlink()
    result = _update(traces, out)
    assert (result.parsed, result.retracted) == (1, 2)
    assert result.plan == "0 new, 1 changed and 1 removed trace files"
    assert published_state(out, skip=PER_RUN) == _recomputed(traces, tmp_path)


def test_running_again_changes_nothing(pieces: Path, tmp_path: Path) -> None:
    traces, out = tmp_path / "traces", tmp_path / "out"
    _add(pieces, traces, _names(pieces))
    first = _update(traces, out)
    current = current_run(out)
    before = published_state(out, skip=())
    again = _update(traces, out)
    assert again.up_to_date
    assert (again.headline, again.counts) == (first.headline, first.counts)
    assert current_run(out) == current
    assert published_state(out, skip=()) == before


def test_a_touched_file_is_read_again_and_publishes_the_same_tables(
    pieces: Path, tmp_path: Path
) -> None:
    """A file is known by its name, size and modification time, as any store lists it: one
    rewritten with the same bytes is read again, and changes no table."""
    traces, out = tmp_path / "traces", tmp_path / "out"
    names = _names(pieces)
    _add(pieces, traces, names)
    _update(traces, out)
    before = published_state(out, skip=PER_RUN)
    touched = traces / names[0]
    touched.write_bytes(touched.read_bytes())
    again = _update(traces, out)
    assert (again.parsed, again.retracted) == (1, 1)
    assert again.plan == "0 new, 1 changed and 0 removed trace files"
    assert published_state(out, skip=PER_RUN) == before


def _ledger(out: Path, job: str, day: str) -> dict[str, float]:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select category, chip_s from chip_time_ledger where job_id = ? and day = ?",
            [job, day],
        ).fetchall()
    return dict(rows)


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_late_file_restates_an_earlier_day(tmp_path: Path) -> None:
    """Attempt 0 runs on day 1 and saves step 1 only; a day-2 file holds attempt 1. Only then is
    step 2 (00:11-00:21, 2 chips) known to be lost, so day 1's ledger changes: 1,200 chip-s."""
    traces, out = tmp_path / "traces", tmp_path / "out"
    _write(traces / "scheduler/day1.jsonl", [submit("r", "00:00", 2), schedule("r", "00:00", 0, 2)])
    _write(
        traces / "runtime/day1.jsonl",
        [
            span("r", "step", "00:00", "00:10", step=1),
            span("r", "checkpoint_save", "00:10", "00:11", step=1),
            span("r", "step", "00:11", "00:21", step=2),
        ],
    )
    _update(traces, out)
    assert "lost_progress" not in _ledger(out, "r", "2026-11-20")
    _write(traces / "runtime/day2.jsonl", [span("r", "step", "+1 00:00", "+1 00:10", 2, 1)])
    _write(traces / "scheduler/day2.jsonl", [end("r", "+1 00:30")])
    result = _update(traces, out)
    assert ("chip_time_ledger", "2026-11-20") in result.changed_days
    assert _ledger(out, "r", "2026-11-20")["lost_progress"] == 1200
    assert published_state(out, skip=PER_RUN) == _recomputed(traces, tmp_path)


DUCKDB_CLI = Path(sys.executable).with_name("duckdb")  # from the duckdb-cli dev dependency
QUERY = "select count(*), sum(wanted_chip_s), max(day) from job_day_goodput;"


def _cli_query(database: Path) -> str:
    """The query's answer from a fresh `duckdb -readonly` process."""
    args = [str(DUCKDB_CLI), "-readonly", "-csv", "-noheader", str(database), "-c", QUERY]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()


def _ask(session: subprocess.Popen[str]) -> str:
    """The query's answer from a CLI session that stays open."""
    assert session.stdin is not None and session.stdout is not None
    session.stdin.write(f"{QUERY}\n.print END\n")
    session.stdin.flush()
    lines = []
    while (line := session.stdout.readline().strip()) != "END":
        lines.append(line)
    return "\n".join(lines)


def test_a_duckdb_cli_reader_sees_the_old_tables_or_the_new_ones(
    pieces: Path, tmp_path: Path
) -> None:
    """An analyst keeps `duckdb -readonly DIR/mpg.duckdb` open through an incremental run, and
    others open it afresh meanwhile: every answer is the old tables' or the new ones'."""
    traces, out = tmp_path / "traces", tmp_path / "out"
    names = _names(pieces)
    _add(pieces, traces, names[::2])
    _update(traces, out)
    database = out / "mpg.duckdb"
    old = _cli_query(database)
    session = subprocess.Popen(
        [str(DUCKDB_CLI), "-readonly", "-csv", "-noheader", str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    _add(pieces, traces, names[1::2])
    command = [sys.executable, "-m", "mpg.cli", "run", "--traces", str(traces), "--out", str(out)]
    process = subprocess.Popen([*command, "--buckets", str(BUCKETS)], stdout=subprocess.DEVNULL)
    held, fresh = [], []
    while process.poll() is None:
        held.append(_ask(session))
        fresh.append(_cli_query(database))
    assert process.returncode == 0
    new = _cli_query(database)
    held.append(_ask(session))
    session.communicate(".quit\n")
    assert new != old
    assert set(held) == {old}  # the open session keeps the snapshot it opened
    assert set(fresh) <= {old, new}
    assert fresh == sorted(fresh, key=[old, new].index)  # never back to old once new was seen


def test_a_read_write_duckdb_session_does_not_stop_a_run(pieces: Path, tmp_path: Path) -> None:
    """`duckdb DIR/mpg.duckdb` (read-write, the shell's default) locks that file against every
    other process; runs never open a published database, so they go on."""
    traces, out = tmp_path / "traces", tmp_path / "out"
    names = _names(pieces)
    _add(pieces, traces, names[::2])
    first = _update(traces, out)
    session = subprocess.Popen(
        [str(DUCKDB_CLI), "-csv", "-noheader", str(out / "mpg.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    held = _ask(session)  # the session has the file open, and locked
    again = _update(traces, out)
    assert again.up_to_date
    assert (again.headline, again.counts) == (first.headline, first.counts)
    _add(pieces, traces, names[1::2])
    assert _update(traces, out).parsed == len(names[1::2])
    assert _ask(session) == held
    session.communicate(".quit\n")
