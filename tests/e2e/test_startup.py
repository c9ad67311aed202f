"""Start-up: `mpg --help` and one-line user errors import nothing heavy (issue 14).

Each command line runs `mpg.cli.main` in a fresh interpreter, which then reports the modules it
imported. The list of heavy modules comes from `python -X importtime` on the machine the issue was
measured on (cumulative import time, seconds): apache_beam 1.6, great_expectations 2.5-4, altair
0.78 (with jsonschema), google.cloud.bigquery 0.9, polars 0.5, sqlglot 0.14-0.2, rich (console,
table, progress) 0.1-0.16, pandas 0.7, jax several; vl_convert is small but only rendering needs
it. The floor a command is held to is `import duckdb, pyarrow` (0.3-0.5 s): a command that has to
open the published database may import those two, and nothing on this list. bench/startup.py
times the same command lines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "altair",
    "vl_convert",
    "jsonschema",
    "apache_beam",
    "great_expectations",
    "google.cloud",
    "pandas",
    "polars",
    "sqlglot",
    "rich",
    "jax",
    "pyiceberg",
    "deltalake",
)
FLOOR = ("duckdb", "pyarrow")

_PROBE = """
import json, sys
import mpg.cli
try:
    status = mpg.cli.main(sys.argv[1:])
except SystemExit as exit:
    status = exit.code
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def _imports(*argv: str | Path) -> tuple[int, list[str], str]:
    """Exit status, top-level names of the modules imported, and stderr of `mpg ARGV`."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, argv)], capture_output=True, text=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["status"], report["modules"], done.stderr


def _heavy(modules: list[str], allowed: tuple[str, ...] = ()) -> list[str]:
    """The packages of HEAVY and FLOOR, but `allowed`, of which `modules` hold any module."""
    return sorted(
        {p for p in HEAVY + FLOOR for m in modules if m == p or m.startswith(f"{p}.")}
        - set(allowed)
    )


COMMANDS = ("run", "backfill", "simulate", "explain", "sql", "compare", "report", "import")


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        *([command, "--help"] for command in COMMANDS),
        ["import", "ml-goodput", "--help"],
        ["import", "alibaba-gpu-v2023", "--help"],
    ],
    ids=" ".join,
)
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    status, modules, _ = _imports(*argv)
    assert (status, _heavy(modules)) == (0, [])


def _errors(tmp: Path) -> list[tuple[list[str | Path], str]]:
    """Mistakes made before any table is read, and the start of the line each gets."""
    return [
        (["compare", "--base", "2026-11-01", "--current", "2026-11-31"], "not a range of days"),
        (["compare", "--base", "2026-11-09", "--current", "2026-11-01"], "the base period"),
        (["explain", "--job", "j", "--day", "2026-13-01"], "argument --day: '2026-13-01'"),
        (["report", "--from", "2026-02-30"], "argument --from: '2026-02-30' is not a date"),
        (["report", "--file", tmp / "missing" / "r.html"], f"--file {tmp / 'missing'}"),
        (["report", "--file", tmp], f"--file {tmp} is a folder"),
        (["report", "--compare", "2026-11-01", "x"], "not a range of days"),
        (["run", "--traces", tmp], "the following arguments are required: --out"),
        (["backfill", "--out", tmp, "--metric-version", "v2", "--from", "x", "--to", "y"], "arg"),
        (["simulate", "--seed", "x"], "argument --seed: invalid int value"),
        (["sql", "--out", tmp, "--csv", "--json", "select 1"], "argument --json: not allowed"),
        (["import", "alibaba-gpu-v2023", tmp, "--out", tmp / "t", "--origin", "2023-01-01"], "arg"),
        (["import", "ml-goodput", tmp / "nope.jsonl", "--out", tmp / "t"], f"{tmp / 'nope'}"),
        (["import", "nope"], "argument FORMAT: invalid choice: 'nope'"),
        (["nope"], "argument command: invalid choice: 'nope'"),
    ]


@pytest.mark.parametrize("case", range(15))
def test_one_line_user_errors_import_nothing_heavy(tmp_path: Path, case: int) -> None:
    argv, message = _errors(tmp_path)[case]
    status, modules, stderr = _imports(*argv)
    assert stderr.startswith(f"mpg: error: {message}") and stderr.count("\n") == 1, stderr
    assert (status, _heavy(modules)) == (2, [])


def test_a_reader_without_published_tables_imports_nothing_heavy(tmp_path: Path) -> None:
    """The commands that read the published tables find them missing with the standard library
    alone (`mpg.output.pointer`): not even DuckDB."""
    for argv in (
        ["sql", "--out", tmp_path, "select 1"],
        ["explain", "--job", "j", "--out", tmp_path],
        ["report", "--out", tmp_path],
        [
            "compare",
            "--base",
            "2026-11-01..2026-11-07",
            "--current",
            "2026-11-08",
            "--out",
            tmp_path,
        ],
    ):
        status, modules, stderr = _imports(*argv)
        assert stderr == f"mpg: error: no published tables in {tmp_path}: run mpg run first\n"
        assert (status, _heavy(modules)) == (2, [])


_ENDING = """
import atexit, sys
from mpg.cli import end
atexit.register(lambda: print("an atexit hook ran"))
print("buffered, not yet flushed", end="; ")
end(int(sys.argv[1]))
"""


@pytest.mark.parametrize("status", [0, 2])
def test_the_console_script_ends_with_its_status_after_hooks_and_flushes(status: int) -> None:
    """`mpg` ends without tearing the interpreter down (`mpg.cli.end`), but not without what an
    orderly exit owes: the status, the atexit hooks, the buffered output. The console script is
    `mpg.cli:script`, which ends through it."""
    from importlib.metadata import entry_points

    assert [s.value for s in entry_points(group="console_scripts", name="mpg")] == [
        "mpg.cli:script"
    ]
    done = subprocess.run(
        [sys.executable, "-c", _ENDING, str(status)], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (
        status,
        "buffered, not yet flushed; an atexit hook ran\n",
    )
