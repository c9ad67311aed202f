"""The real `mpg` CLI, run in this process, its output captured as a subprocess's would be."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from mpg.cli import main


def run_mpg(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process (`mpg.cli.main`), its output captured as a subprocess's
    would be: exit code, stdout, stderr (`env` adds variables for the call). A new interpreter
    per call cost ~2 s of imports and proved nothing more; tests of what only a process shows
    (start-up time, signals, kills, a shell on stdin) start one themselves."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    terminate = signal.getsignal(signal.SIGTERM)  # main() installs its own handler
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's errors and --help
            code = _exit_code(exc)
        except Exception:  # a bug: the traceback on stderr and 1, as the interpreter does
            traceback.print_exc()
            code = 1
        finally:
            signal.signal(signal.SIGTERM, terminate)
    return subprocess.CompletedProcess(["mpg", *argv], code, out.getvalue(), err.getvalue())


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _environment(env: dict[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
