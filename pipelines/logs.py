"""A run's logs: Beam's and its workers' in a file beside the run's record, the terminal quiet.

    DIR/runs/<run id>.json    the run's record (`mpg.output.runlog`)
    DIR/runs/<run id>.log     what Beam, Great Expectations and the workers logged (INFO and up),
                              and whatever worker processes wrote to their standard output and
                              error (their start-up, C++ libraries' messages)

In one process, Beam's and the steps' log records at INFO are never shown; worker processes
(`--direct_running_mode=multi_processing`) would print theirs on the terminal they share with the
launcher (~500 lines a run: Beam's start-up, Great Expectations' registrations) and Beam relays
their warnings and errors to the launcher's log again. So for a run:

- worker processes this one starts get the log file as standard output and error, and so does
  this process's own descriptor 2 (what C++ libraries print), `sys.stderr` kept on the terminal;
- the log file receives every log record at INFO and up (`--log-level debug`: DEBUG too), in
  this process and, through Beam's relay, from the workers (whose own handlers already wrote
  them to their standard error, that is to the file: a relayed record is not written twice),
  but Beam's notes on type hints it cannot resolve (below WARNING; kept with `debug`);
- the terminal shows what an in-process run shows: WARNING and up, except Beam's own messages
  about its workers, relayed from worker processes or logged by worker threads (their start-up,
  a failing step's traceback, which the run's one-line error says better). `--log-level LEVEL`
  shows every record at LEVEL and up, the workers' included.

Every run leaves a log file, worker processes or not; on object storage it is written locally
and uploaded when the run ends, whatever its outcome. Logs are pruned with the run records.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path

from mpg.output.store import OutputStore

LEVELS = ("debug", "info", "warning", "error")
# The logger through which Beam's local job service relays its workers' records, and how.
_RELAY_LOGGER = "apache_beam.runners.portability.local_job_service"
_RELAY_MESSAGE = "Worker: %s"
# Beam's workers in this process (`multi_threading`, mpg's default) log under these names: their
# bookkeeping, and a failing step's traceback, which the run's one-line error says better.
_WORKER_LOGGERS = ("apache_beam.runners.worker.",)
# Beam's notes, at INFO, on every type hint it cannot resolve ("Converting string literal type
# hint to Any"): mpg's modules postpone their annotations, and the coders that matter are declared
# (`mpg.pipelines.coders`), so they were 166 of a run's ~200 lines. Kept with --log-level debug.
_TYPE_HINT_NOTES = "apache_beam.typehints.native_type_compatibility"
_FORMAT = "%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s"


def _relayed(record: logging.LogRecord) -> bool:
    return record.name == _RELAY_LOGGER and record.msg == _RELAY_MESSAGE


class _Relay:
    """A worker's record as Beam's relay carries it (a LogEntry in protobuf text)."""

    def __init__(self, record: logging.LogRecord) -> None:
        from apache_beam.portability.api import beam_fn_api_pb2
        from google.protobuf import text_format

        self.entry = beam_fn_api_pb2.LogEntry()
        try:
            text_format.Parse(str(record.args[0]) if record.args else "", self.entry)
        except text_format.ParseError:
            self.entry.message = str(record.args[0]) if record.args else ""

    @property
    def from_beam(self) -> bool:
        """Whether Beam's own code logged it (its workers' start-up and bookkeeping)."""
        return "/apache_beam/" in self.entry.log_location

    def text(self, levelname: str) -> str:
        where = Path(self.entry.log_location).name or "worker"
        lines = [f"{levelname}:worker {where}:{self.entry.message}"]
        if self.entry.trace:
            lines.append(self.entry.trace.rstrip("\n"))
        return "\n".join(lines)


class _Terminal(logging.Handler):
    """The records a user sees, on the current `sys.stderr` (looked up at each record, so that a
    caller's redirection applies)."""

    def __init__(self, level: int, explicit: bool) -> None:
        super().__init__(level)
        self.explicit = explicit  # the user asked for a level: Beam's own relays shown too
        self.setFormatter(logging.Formatter(logging.BASIC_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if _relayed(record):
                relay = _Relay(record)
                if relay.from_beam and not self.explicit:
                    return
                text = relay.text(record.levelname)
            elif record.name.startswith(_WORKER_LOGGERS) and not self.explicit:
                return
            else:
                text = self.format(record)
            print(text, file=sys.stderr, flush=True)
        except Exception:  # logging must never fail the run
            self.handleError(record)


def _not_relayed(record: logging.LogRecord) -> bool:
    return not _relayed(record)


def _not_a_type_hint_note(record: logging.LogRecord) -> bool:
    return record.name != _TYPE_HINT_NOTES or record.levelno >= logging.WARNING


class _File(logging.FileHandler):
    """The log file. A record it cannot write (a full disk) is lost without a word: the run's own
    error, if the disk stops it, is the one to see."""

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        pass

    def close(self) -> None:
        """Close the file; what it could not flush (a full disk) is lost the same way, and the
        error that ended the run, not the log's, is the one raised."""
        with contextlib.suppress(OSError):
            super().close()


@contextlib.contextmanager
def run_log(store: OutputStore, run_id: str, level: str | None = None) -> Iterator[None]:
    """Send this run's logs to `DIR/runs/<run_id>.log` (and the terminal, as the module says)
    for the block. `level`: one of LEVELS, the least severe shown on the terminal (None: what
    an in-process run shows)."""
    terminal_level = getattr(logging, (level or "warning").upper())
    file_level = min(logging.INFO, terminal_level)
    with _spool(store, run_id) as (path, upload), path.open("ab", buffering=0) as out:
        to_file = _File(path, encoding="utf-8")
        to_file.setLevel(file_level)
        to_file.setFormatter(logging.Formatter(_FORMAT))
        to_file.addFilter(_not_relayed)
        if file_level > logging.DEBUG:
            to_file.addFilter(_not_a_type_hint_note)
        to_terminal = _Terminal(terminal_level, explicit=level is not None)
        root = logging.getLogger()
        saved = (root.level, list(root.handlers))
        root.handlers[:] = [to_file, to_terminal]
        root.setLevel(file_level)
        # Uploaded while native writes still go to the file: a C++ client's note about a
        # retried request during the upload stays off the terminal.
        with _native_stderr_to(out.fileno()), contextlib.ExitStack() as finish:
            finish.callback(upload)
            finish.callback(to_file.close)
            finish.callback(_restore, root, *saved)
            with _workers_writing_to(out.fileno()), _worker_threads_unprinted():
                yield


def _restore(root: logging.Logger, level: int, handlers: list[logging.Handler]) -> None:
    root.handlers[:] = handlers
    root.setLevel(level)


@contextlib.contextmanager
def _spool(store: OutputStore, run_id: str) -> Iterator[tuple[Path, Callable[[], None]]]:
    """Where the log is written while the run lasts, and what stores it when the run ends: in
    place locally (nothing to do); on object storage a local file, uploaded (a failure to upload
    it does not hide the run's own error)."""
    target = store.run(run_id).log
    if not store.remote:
        path = Path(store.storage.full(target))
        path.parent.mkdir(parents=True, exist_ok=True)
        yield path, lambda: None
        return

    def upload() -> None:
        with contextlib.suppress(Exception):
            store.storage.write_bytes(target, path.read_bytes())

    with tempfile.TemporaryDirectory(prefix="mpg-log-") as folder:
        path = Path(folder) / "run.log"
        path.touch()
        yield path, upload


@contextlib.contextmanager
def _native_stderr_to(fd: int) -> Iterator[None]:
    """This process's standard error (descriptor 2: what C++ libraries log, such as pyarrow's
    S3 client noting a retried request) goes to `fd` for the block; `sys.stderr`, what mpg and
    Python write, stays on the terminal. Where `sys.stderr` is not descriptor 2 (a caller's own
    stream), nothing changes."""
    try:
        real = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        real = False
    if not real:
        yield
        return
    sys.stderr.flush()
    saved = sys.stderr
    terminal = os.dup(2)
    sys.stderr = open(  # noqa: SIM115, PTH123 - a descriptor, closed below
        terminal, "w", buffering=1, encoding=saved.encoding, errors=saved.errors, closefd=True
    )
    os.dup2(fd, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(terminal, 2)
        sys.stderr.close()
        sys.stderr = saved


@contextlib.contextmanager
def _workers_writing_to(fd: int) -> Iterator[None]:
    """Worker processes that Beam's direct runner starts in the block (`multi_processing`) write
    their standard output and error to `fd`. Beam starts them with `subprocess.Popen` from its
    local job service, handing them this process's own streams: that module alone sees a
    `Popen` that hands them `fd` instead."""
    from apache_beam.runners.portability import local_job_service

    shim = types.SimpleNamespace(
        Popen=functools.partial(subprocess.Popen, stdout=fd, stderr=subprocess.STDOUT)
    )
    saved = local_job_service.subprocess
    local_job_service.subprocess = shim  # type: ignore[assignment]
    try:
        yield
    finally:
        local_job_service.subprocess = saved


@contextlib.contextmanager
def _worker_threads_unprinted() -> Iterator[None]:
    """Beam's workers in this process print a failing instruction's traceback on `sys.stderr`
    before logging the same text as an error record (which the log file keeps): that module
    alone sees a `print` that does nothing, for the block."""
    from apache_beam.runners.worker import sdk_worker

    sdk_worker.print = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del sdk_worker.print  # type: ignore[attr-defined]
