"""Incremental runs: running again changes nothing; files that change or vanish are retracted;
late files restate earlier days; readers of mpg.duckdb during a run. The fleet cut into pieces
is tests/support/incremental.py's; the walks in random orders are
tests/e2e/test_incremental_orders.py.

The tests that start from a run over every piece (or every other piece) start from a copy of one
(`everything`, `half`): a copied output folder, beside a copy of its traces with their times, is a
folder of its own (tests/e2e/test_faults.py), and the copy spares each test that run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from mpg.pipelines.result import RunResult
from tests.support.incremental import (
    BUCKETS,
    add,
    lines_of,
    piece_names,
    pieces,
    recomputed,
    update,
)
from tests.support.snapshots import PER_RUN, current_run, published_state
from tests.support.timeline import end, schedule, span, submit

__all__ = ["pieces"]  # the fixture, imported for pytest


@dataclass(frozen=True)
class Run:
    """A trace root, the output folder of one run over it, and what the run returned."""

    traces: Path
    out: Path
    result: RunResult

    def copy(self, into: Path) -> tuple[Path, Path]:
        """The traces (their modification times too) and the output folder, copied `into`."""
        return shutil.copytree(self.traces, into / "traces"), shutil.copytree(
            self.out, into / "out"
        )


def _run_over(pieces: Path, names: list[str], root: Path) -> Run:
    traces, out = root / "traces", root / "out"
    add(pieces, traces, names)
    return Run(traces, out, update(traces, out))


@pytest.fixture(scope="module")
def everything(pieces: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _run_over(pieces, piece_names(pieces), tmp_path_factory.mktemp("everything"))


@pytest.fixture(scope="module")
def half(pieces: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Every other piece (the others, for a second run: `piece_names(pieces)[1::2]`)."""
    return _run_over(pieces, piece_names(pieces)[::2], tmp_path_factory.mktemp("half"))


def test_changed_and_removed_files_are_retracted(everything: Run, tmp_path: Path) -> None:
    traces, out = everything.copy(tmp_path)
    names = piece_names(traces)
    grown, gone = traces / names[0], traces / names[-1]
    lines = lines_of(grown)
    grown.write_bytes(b"".join(lines[: len(lines) // 2]))  # rewritten shorter
    gone.unlink()
    result = update(traces, out)
    assert (result.parsed, result.retracted) == (1, 2)
    assert result.plan == "0 new, 1 changed and 1 removed trace files"
    assert published_state(out, skip=PER_RUN) == recomputed(traces, tmp_path)


def test_running_again_changes_nothing(everything: Run, tmp_path: Path) -> None:
    traces, out = everything.copy(tmp_path)
    first = everything.result
    current = current_run(out)
    before = published_state(out, skip=())
    again = update(traces, out)
    assert again.up_to_date
    assert (again.scorecard, again.days, again.counts) == (
        first.scorecard,
        first.days,
        first.counts,
    )
    assert current_run(out) == current
    assert published_state(out, skip=()) == before
    _a_price_changed_in_mpg_toml_reaches_the_next_ordinary_run(traces, out)


def _a_price_changed_in_mpg_toml_reaches_the_next_ordinary_run(traces: Path, out: Path) -> None:
    """No new file, a new price: the next ordinary run re-prices every published day from the
    stored ledger (which it does not recompute), says so, and every view follows."""

    def tables() -> dict[str, list[tuple]]:
        with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
            return {
                t: con.sql(f"select * from {t} order by all").fetchall()  # fixed names
                for t in ("job_day_goodput", "chip_time_ledger", "chip_time_cost")
            }

    before = tables()
    (out / "mpg.toml").write_text(
        '[prices]\n"tpu-v5e" = 1.25\n"tpu-v4" = 2.0\n[energy]\npue = 1.5\n'
    )
    repriced = update(traces, out)
    assert not repriced.up_to_date
    assert repriced.plan == (
        "re-priced every published day from the stored ledger (DIR/mpg.toml: price of tpu-v4 "
        "$3.22 -> $2.00, of tpu-v5e none -> $1.25 a chip-hour; PUE 1.1 -> 1.5)"
    )
    after = tables()
    assert after["job_day_goodput"] == before["job_day_goodput"]
    assert after["chip_time_ledger"] == before["chip_time_ledger"]
    prices = {"tpu-v5e": 1.25, "tpu-v4": 2.0, "gpu-h100": 12.29}  # gpu-h100: the catalog's
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        costs = con.sql("select chip_generation, chip_s, usd, pue from chip_time_cost").fetchall()
        (lost,) = con.execute(
            "select sum(lost_usd) from cost_by_slice where size_class is null and "
            "workload_class is null and framework is null and chip_generation is null"
        ).fetchall()[0]
        ledger = con.sql(
            "select g.chip_generation, l.category, l.chip_s from chip_time_ledger l join "
            "job_day_goodput g using (day, job_id, metric_version) where l.category <> 'ideal'"
        ).fetchall()
    assert costs and all(pue == 1.5 for *_, pue in costs)
    for generation, chip_s, usd, _ in costs:
        assert usd == (chip_s / 3600 * prices[generation] if generation in prices else None)
    by_hand = sum(chip_s / 3600 * prices[g] for g, _, chip_s in ledger if g in prices)
    assert lost == pytest.approx(by_hand, rel=1e-12)
    assert update(traces, out).up_to_date


def test_a_touched_file_is_read_again_and_publishes_the_same_tables(
    everything: Run, tmp_path: Path
) -> None:
    """A file is known by its name, size and modification time, as any store lists it: one
    rewritten with the same bytes is read again, and changes no table."""
    traces, out = everything.copy(tmp_path)
    before = published_state(out, skip=PER_RUN)
    touched = traces / piece_names(traces)[0]
    touched.write_bytes(touched.read_bytes())
    again = update(traces, out)
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
    update(traces, out)
    assert "lost_progress" not in _ledger(out, "r", "2026-11-20")
    _write(traces / "runtime/day2.jsonl", [span("r", "step", "+1 00:00", "+1 00:10", 2, 1)])
    _write(traces / "scheduler/day2.jsonl", [end("r", "+1 00:30")])
    result = update(traces, out)
    assert ("chip_time_ledger", "2026-11-20") in result.changed_days
    assert _ledger(out, "r", "2026-11-20")["lost_progress"] == 1200
    assert published_state(out, skip=PER_RUN) == recomputed(traces, tmp_path)


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
    pieces: Path, half: Run, tmp_path: Path
) -> None:
    """An analyst keeps `duckdb -readonly DIR/mpg.duckdb` open through an incremental run, and
    others open it afresh meanwhile: every answer is the old tables' or the new ones'."""
    traces, out = half.copy(tmp_path)
    names = piece_names(pieces)
    database = out / "mpg.duckdb"
    old = _cli_query(database)
    session = subprocess.Popen(
        [str(DUCKDB_CLI), "-readonly", "-csv", "-noheader", str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    add(pieces, traces, names[1::2])
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


def test_a_read_write_duckdb_session_does_not_stop_a_run(
    pieces: Path, half: Run, tmp_path: Path
) -> None:
    """`duckdb DIR/mpg.duckdb` (read-write, the shell's default) locks that file against every
    other process; runs never open a published database, so they go on."""
    traces, out = half.copy(tmp_path)
    names = piece_names(pieces)
    first = half.result
    session = subprocess.Popen(
        [str(DUCKDB_CLI), "-csv", "-noheader", str(out / "mpg.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    held = _ask(session)  # the session has the file open, and locked
    again = update(traces, out)
    assert again.up_to_date
    assert (again.scorecard, again.counts) == (first.scorecard, first.counts)
    add(pieces, traces, names[1::2])
    assert update(traces, out).parsed == len(names[1::2])
    assert _ask(session) == held
    session.communicate(".quit\n")
