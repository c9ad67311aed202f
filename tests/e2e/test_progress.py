"""Progress on stderr: plain lines for a real `mpg run`, `mpg import` and `mpg backfill`, rich
bars on a forced terminal; stdout and one-line errors as without it. Counts are checked against
the inputs and the published tables; rates only for their format (no timed assertions)."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import duckdb
import pytest
from rich.console import Console

from mpg.cli import progress
from mpg.pipelines.options import RunOptions
from mpg.pipelines.run import run
from tests.support.cli import run_mpg
from tests.support.files import SPEC_EXAMPLES, adapter_fixtures

TINY = SPEC_EXAMPLES / "tiny"
ML_GOODPUT = adapter_fixtures("ml-goodput")
PLAIN = {"MPG_PROGRESS": "plain"}
# `<phase> 1.2 s, 12,345 records, 6,172/s`: what a plain line says after the command's name.
LINE = re.compile(r"(?P<phase>.+?) (\d+\.\d) s, (?P<count>[\d,]+) (?P<unit>\w+), [\d,]+/s")


def _lines(stderr: str, command: str) -> list[tuple[str, int, str]]:
    """(phase, count, unit) of each progress line, each checked for its whole format."""
    out = []
    for line in stderr.splitlines():
        prefix = f"mpg: {command}: "
        assert line.startswith(prefix), line
        match = LINE.fullmatch(line.removeprefix(prefix).replace("done in", "done", 1))
        assert match, line
        out.append((match["phase"], int(match["count"].replace(",", "")), match["unit"]))
    return out


def _input_lines(root: Path) -> int:
    """Records in a trace root, counted without mpg: its JSON lines."""
    return sum(len(p.read_bytes().splitlines()) for p in root.glob("*/*.jsonl"))


def _accepted(out: Path) -> int:
    with duckdb.connect(str(out / "mpg.duckdb"), read_only=True) as con:
        return con.execute("select sum(accepted)::int from record_counts").fetchone()[0]


def _masked(stdout: str, out: Path) -> str:
    """The headline less what differs between two runs: run id, time, output folder."""
    first, rest = stdout.split("\n", 1)
    assert re.fullmatch(rf"mpg run \S+: 3 trace files in \d+\.\d s -> {out}/mpg.duckdb", first)
    return rest.replace(str(out), "OUT")


def test_plain_run_reports_each_phase_and_a_summary_on_stderr(tmp_path: Path) -> None:
    shown = run_mpg("run", "--traces", TINY, "--out", tmp_path / "a", env=PLAIN)
    hidden = run_mpg("run", "--traces", TINY, "--out", tmp_path / "b")
    assert shown.returncode == hidden.returncode == 0, shown.stderr
    records = _input_lines(TINY)
    assert records == 50  # 11 scheduler events, 36 spans, 3 profiles
    assert _lines(shown.stderr, "run") == [
        ("plan", 3, "files"),
        ("pipeline", records, "records"),
        ("publish", _accepted(tmp_path / "a"), "records"),
        ("done", records, "records"),
    ]
    assert hidden.stderr == ""
    assert _masked(shown.stdout, tmp_path / "a") == _masked(hidden.stdout, tmp_path / "b")

    again = run_mpg("run", "--traces", TINY, "--out", tmp_path / "a", env=PLAIN)
    assert again.returncode == 0, again.stderr
    assert _lines(again.stderr, "run") == [("plan", 3, "files"), ("done", 0, "records")]


def test_plain_import_reports_records_converted(tmp_path: Path) -> None:
    files = sorted(ML_GOODPUT.glob("*.jsonl"))
    job = ("--chips", "4", "--chip-generation", "tpu-v5e")
    args = ("import", "ml-goodput", *files, "--out", tmp_path / "t", *job)
    result = run_mpg(*args, env=PLAIN)
    assert result.returncode == 0, result.stderr
    read = sum(len(f.read_bytes().splitlines()) for f in files)
    assert read == 392
    assert result.stdout.startswith(f"mpg import ml-goodput: {read} records read = {read} conv")
    assert _lines(result.stderr, "import") == [
        ("convert", read, "records"),
        ("write", read, "records"),
        ("done", read, "records"),
    ]


def test_plain_backfill_reports_days(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_mpg("run", "--traces", TINY, "--out", out).returncode == 0
    args = ("--metric-version", "v2", "--from", "2026-11-20", "--to", "2026-11-21")
    result = run_mpg("backfill", "--out", out, *args, "--chunk-days", "1", env=PLAIN)
    assert result.returncode == 0, result.stderr
    accepted = _accepted(out)  # a backfill adds no records: each chunk publishes them all
    assert _lines(result.stderr, "backfill") == [
        ("publish", accepted, "records"),
        ("publish", accepted, "records"),
        ("days", 2, "days"),
        ("done", 2, "days"),
    ]


def test_a_user_error_is_still_one_line(tmp_path: Path) -> None:
    result = run_mpg("run", "--traces", tmp_path / "nope", "--out", tmp_path / "out", env=PLAIN)
    assert result.returncode == 2
    assert result.stderr == (
        f"mpg: error: trace root {tmp_path / 'nope'} does not exist or is not a directory\n"
    )
    # (checked where progress is first shown: after a command's options and inputs are)
    log = sorted(ML_GOODPUT.glob("*.jsonl"))[0]
    job = ("--chips", "4", "--chip-generation", "tpu-v5e")
    bad = run_mpg("import", "ml-goodput", log, "--out", tmp_path / "t", *job,
                  env={"MPG_PROGRESS": "loud"})  # fmt: skip
    assert (bad.returncode, bad.stderr) == (
        2,
        "mpg: error: MPG_PROGRESS=loud: not one of auto, rich, plain, none\n",
    )


def test_a_failed_phase_writes_nothing_and_short_phases_hide_in_auto_mode() -> None:
    stream = StringIO()
    reporter = progress.Reporter("run", stream=stream)
    with (
        pytest.raises(OSError),
        progress.reporting("run", reporter),
        progress.phase("pipeline") as p,
    ):
        p.done(7)
        raise OSError("disk full")
    assert stream.getvalue() == ""

    quiet = StringIO()  # auto mode's threshold, raised so that no phase can reach it
    with progress.reporting("run", progress.Reporter("run", stream=quiet, min_seconds=3600)):
        with progress.phase("plan", unit="files") as step:
            step.done(3)
        progress.summary(3, unit="files")
    assert quiet.getvalue() == ""


def test_rich_bars_show_each_phase_with_its_final_count(tmp_path: Path) -> None:
    screen = StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system=None)
    reporter = progress.Reporter("run", console=console)
    with progress.reporting("run", reporter):
        run(RunOptions(traces=TINY, out=tmp_path))
    assert reporter.bars is not None
    accepted = _accepted(tmp_path)
    assert [(t.description, t.completed, t.total) for t in reporter.bars.tasks] == [
        ("run: plan", 3, 3),
        ("run: pipeline", 50, 50),
        ("run: publish", accepted, accepted),
    ]
    shown = screen.getvalue()
    for text in ("run: plan", "3/3", "files", "run: pipeline", "50/50", "records"):
        assert text in shown
    assert re.search(r"mpg: run: done in \d+\.\d s, 50 records, [\d,]+/s", shown)


def test_outside_a_command_phases_are_silent(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    with progress.phase("plan", unit="files") as step:
        step.done(3)
    progress.summary(3)
    assert capfd.readouterr() == ("", "")
