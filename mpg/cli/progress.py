"""Progress of long commands, on stderr: rich bars on a terminal, plain log lines otherwise.

    with progress.reporting("run"):              # the CLI, once per command
        with progress.phase("pipeline", unit="records") as p:
            ...                                  # the work, untouched
            p.done(records_read)                 # the count, once it is known
        progress.summary(records_read)

Work is reported by phase, never by record: `mpg run` spends its time in Beam steps, and a
callback per record would cost more than it shows. A phase's count is what it got through (set
at its end when only then known, or advanced per file); its rate is that count over its time.

Outside `reporting` (the library used from Python, tests calling `run()`), every call is a
no-op. Nothing is written to stdout, which scripts and tests parse (the headline stays there).

`MPG_PROGRESS` picks the mode: `auto` (the default) shows rich bars when stderr is a terminal
and plain lines otherwise, in both cases only for phases (and a summary only for commands) that
took at least `MIN_SECONDS`; `rich` and `plain` force a mode and show every phase; `none` shows
nothing. See docs/operations.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO, cast

from mpg.core.errors import OptionsError

if TYPE_CHECKING:  # rich is imported where bars are shown (0.08 s that a scheduled run skips)
    from rich.console import Console
    from rich.progress import Progress, TaskID

MODES = ("auto", "rich", "plain", "none")
# Work shorter than this is not worth a line: "more than a few seconds" in issue 6.
MIN_SECONDS = 2.0


def rate(count: int, seconds: float, unit: str) -> str:
    """`12,345 records, 6,172/s`: the count and its rate (the count alone for no time at all)."""
    if seconds <= 0:
        return f"{count:,} {unit}"
    return f"{count:,} {unit}, {count / seconds:,.0f}/s"


@dataclass
class Phase:
    """One phase of a command: what it got through so far, in `unit`."""

    name: str
    unit: str
    total: int | None
    count: int = 0
    started: float = field(default_factory=time.monotonic)
    _reporter: Reporter | None = None
    _task: TaskID | None = None

    def advance(self, n: int = 1) -> None:
        """Got through `n` more (a file, a chunk: never call this per record)."""
        self.done(self.count + n)

    def done(self, count: int) -> None:
        """Got through `count` in all."""
        self.count = count
        if self._reporter is not None:
            self._reporter.update(self)


class Reporter:
    """Where one command's phases go: a rich `Progress` on `console`, or plain lines to
    `stream`. `min_seconds` hides phases (and the summary) that took less."""

    def __init__(
        self,
        command: str,
        *,
        console: Console | None = None,
        stream: TextIO | None = None,
        min_seconds: float = 0.0,
    ) -> None:
        self.command = command
        self.stream = stream
        self.min_seconds = min_seconds
        self.started = time.monotonic()
        self.bars: Progress | None = None
        if console is not None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bars = Progress(
                SpinnerColumn(),
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[unit]}"),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                console=console,
                redirect_stdout=False,  # stdout is the command's answer, for scripts
            )

    def __enter__(self) -> Reporter:
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.stop()

    def begin(self, phase: Phase) -> None:
        if self.bars is not None:
            phase._task = self.bars.add_task(
                f"{self.command}: {phase.name}", total=phase.total, unit=phase.unit, rate=""
            )

    def update(self, phase: Phase) -> None:
        if self.bars is not None and phase._task is not None:
            per_s = phase.count / max(time.monotonic() - phase.started, 1e-9)
            self.bars.update(phase._task, completed=phase.count, rate=f"{per_s:,.0f}/s")

    def drop(self, phase: Phase) -> None:
        """The phase failed: its bar goes (the error says why)."""
        if self.bars is not None and phase._task is not None:
            self.bars.remove_task(phase._task)

    def end(self, phase: Phase) -> None:
        """The phase is over: its bar stays (complete) or its line is written, unless short."""
        seconds = time.monotonic() - phase.started
        short = seconds < self.min_seconds
        if self.bars is not None and phase._task is not None:
            if short:
                self.drop(phase)
            else:
                self.update(phase)
                total = phase.total if phase.total is not None else phase.count
                self.bars.update(phase._task, total=total, completed=phase.count)
        elif self.stream is not None and not short:
            line = f"{self.command}: {phase.name} {seconds:.1f} s, "
            self._write(line + rate(phase.count, seconds, phase.unit))

    def summary(self, count: int, unit: str) -> None:
        """The command's last line: its time and rate over all of it."""
        seconds = time.monotonic() - self.started
        if seconds < self.min_seconds:
            return
        line = f"{self.command}: done in {seconds:.1f} s, {rate(count, seconds, unit)}"
        if self.bars is not None:
            self.bars.console.print(f"mpg: {line}", highlight=False)
        else:
            self._write(line)

    def _write(self, line: str) -> None:
        assert self.stream is not None
        print(f"mpg: {line}", file=self.stream, flush=True)


_current: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar(
    "mpg_progress", default=None
)


def reporter_for(command: str, mode: str, stream: TextIO) -> Reporter | None:
    """The reporter `mode` asks for on `stream` (None for `none`)."""
    if mode not in MODES:
        raise OptionsError(f"MPG_PROGRESS={mode}: not one of {', '.join(MODES)}")
    if mode == "none":
        return None
    least = MIN_SECONDS if mode == "auto" else 0.0
    if mode == "rich" or (mode == "auto" and stream.isatty()):
        from rich.console import Console

        console = Console(file=stream, force_terminal=True if mode == "rich" else None)
        return Reporter(command, console=console, min_seconds=least)
    return Reporter(command, stream=stream, min_seconds=least)


class _Stderr:
    """Whatever `sys.stderr` is when written to: a run sends native writes to standard error
    (its workers', C++ libraries') to its log file and `sys.stderr` to the terminal meanwhile
    (`mpg.pipelines.logs`), and progress must follow."""

    def __getattr__(self, name: str) -> object:
        return getattr(sys.stderr, name)


@contextlib.contextmanager
def reporting(command: str, reporter: Reporter | None = None) -> Iterator[Reporter | None]:
    """Report the phases inside to `reporter`, by default the one MPG_PROGRESS asks for on
    stderr."""
    if reporter is None:
        stream = cast(TextIO, _Stderr())
        reporter = reporter_for(command, os.environ.get("MPG_PROGRESS", "auto"), stream)
    if reporter is None:
        yield None
        return
    token = _current.set(reporter)
    try:
        with reporter:
            yield reporter
    finally:
        _current.reset(token)


@contextlib.contextmanager
def phase(name: str, unit: str = "records", total: int | None = None) -> Iterator[Phase]:
    """A phase of the current command (a no-op outside `reporting`). A phase that fails shows
    nothing more: the error says why."""
    reporter = _current.get()
    current = Phase(name, unit, total, _reporter=reporter)
    if reporter is None:
        yield current
        return
    reporter.begin(current)
    try:
        yield current
    except BaseException:
        reporter.drop(current)
        raise
    reporter.end(current)


def summary(count: int, unit: str = "records") -> None:
    """End the current command with its total time and rate (a no-op outside `reporting`)."""
    reporter = _current.get()
    if reporter is not None:
        reporter.summary(count, unit)
