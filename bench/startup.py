"""Start-up of the `mpg` command beside the floor it is held to: importing DuckDB and pyarrow.

    python bench/startup.py [--repeat 5]

Issue 14's target: `mpg --help` and a one-line user error no slower than
`python -c "import duckdb, pyarrow"` on the same machine. Each command runs `--repeat` times in a
fresh interpreter, the commands interleaved (so a busy machine slows them alike), and the best
wall-clock time of each is printed, in seconds, with its ratio to the floor. The one-line errors
are mistakes a user makes before any table is read; each must exit 2. What each command may
import is pinned by tests/e2e/test_startup.py; this measures what that buys.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = ("import duckdb, pyarrow", [sys.executable, "-c", "import duckdb, pyarrow"], 0)


def mpg_command() -> list[str]:
    """The `mpg` script installed beside this Python (what a user runs), else `python -m`."""
    script = Path(sys.executable).with_name("mpg")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "mpg.cli"]


def cases(scratch: Path) -> list[tuple[str, list[str], int]]:
    """(label, command line, expected exit status): help, and one-line user errors."""
    mpg = mpg_command()
    return [
        FLOOR,
        ("mpg --help", [*mpg, "--help"], 0),
        ("mpg report --help", [*mpg, "report", "--help"], 0),
        ("compare: a day that does not exist", [*mpg, "compare", "--base", "2026-11-01",
                                                "--current", "2026-11-31"], 2),
        ("explain: a bad --day", [*mpg, "explain", "--job", "j", "--day", "2026-13-01"], 2),
        ("report: --file in a missing folder", [*mpg, "report", "--file",
                                                str(scratch / "missing" / "r.html")], 2),
        ("sql: no published tables", [*mpg, "sql", "--out", str(scratch), "select 1"], 2),
        ("run: a missing option", [*mpg, "run", "--traces", str(scratch)], 2),
    ]  # fmt: skip


def best_times(commands: list[tuple[str, list[str], int]], repeat: int) -> dict[str, float]:
    best = {label: float("inf") for label, _, _ in commands}
    for _ in range(repeat):
        for label, argv, status in commands:
            started = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            elapsed = time.perf_counter() - started
            if done.returncode != status:
                raise SystemExit(f"{label}: exit {done.returncode}, not {status}: {done.stderr}")
            best[label] = min(best[label], elapsed)
    return best


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--repeat", type=int, default=5)
    repeat = options.parse_args().repeat
    scratch = Path(tempfile.mkdtemp(prefix="mpg-startup-"))
    try:
        best = best_times(cases(scratch), repeat)
    finally:
        shutil.rmtree(scratch)
    floor = best[FLOOR[0]]
    print(f"best of {repeat}, seconds (ratio to `{FLOOR[0]}`)")
    for label, seconds in best.items():
        print(f"  {seconds:6.3f}  {seconds / floor:4.2f}x  {label}")


if __name__ == "__main__":
    main()
