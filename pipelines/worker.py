"""What mpg sets up in each Beam worker process before it runs a step (a Beam plugin).

    --beam_plugins=mpg.pipelines.worker        (added by `mpg.pipelines.runners.beam_args`)

Beam's worker harness imports the modules named by `--beam_plugins` when it starts, in the
worker processes of portable runners and Dataflow. The direct runner's `multi_processing`
workers get no pipeline options, so no plugins: they import this module with `mpg.pipelines`
when they first unpickle one of mpg's steps (the package's docstring says what that covers).
Importing this one:

- **exits at once when steps are still running at exit.** A worker process ends when its runner
  stops it, which after a failure elsewhere happens while other steps still run on its daemon
  threads. CPython 3.11 ends such a thread with `pthread_exit` when it next takes the
  interpreter's lock during finalization; a thread inside DuckDB (which takes it to check for
  signals) or any C++ library that catches all exceptions turns that into `std::terminate`:
  `terminate called after throwing an instance of ''`, `FATAL: exception not rethrown`, exit
  134 (issue 22; tests/e2e/test_worker.py reproduces it without Beam). Their work is void anyway, so
  the process then skips finalization (`os._exit`) after flushing its output.
- **sends Python warnings through logging**, so that Beam relays them to the launcher with the
  worker's other log records (`mpg.pipelines.worker_logs` decides where they are shown).
- **ends bundles promptly** (`end_bundles_promptly`). The in-process runners' workers are the
  launcher's own threads: `mpg.pipelines.runners.pipeline_options` does this there.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
from types import FrameType

# The module Beam's worker processes run as __main__.
_HARNESS = "apache_beam.runners.worker.sdk_worker_main"
# How often Beam's state sampler wakes up, at most (Beam's default: 200 ms). `end_bundles_promptly`
# says why.
SAMPLER_TICK_MS = 10


def _runs_mpg(frame: FrameType | None) -> bool:
    """Whether a thread whose innermost frame is `frame` is inside one of mpg's steps."""
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("mpg."):
            return True
        frame = frame.f_back
    return False


def exit_if_steps_run() -> None:
    """At exit (an `atexit` hook): if another thread is still inside a step, end the process
    now, as it was going to end (1 after an uncaught exception, else 0), without finalizing the
    interpreter under that thread."""
    me = threading.get_ident()
    if not any(t != me and _runs_mpg(f) for t, f in sys._current_frames().items()):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or its pipe gone
            stream.flush()
    os._exit(1 if getattr(sys, "last_value", None) is not None else 0)


def in_worker() -> bool:
    """Whether this process is a Beam worker harness."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return getattr(spec, "name", None) == _HARNESS


def end_bundles_promptly() -> None:
    """Let Beam's state samplers wake up every SAMPLER_TICK_MS at most, not every 200 ms.

    A worker ends each bundle by joining its state sampler's thread, which sleeps in ticks that
    grow from 2 ms to 200 ms over a bundle's first second (`statesampler_fast.pyx`): a bundle
    that ran longer ends up to 200 ms after its last element, 100 ms on average, while the other
    workers wait for the stage to end. On the 2M-span bench fleet the run's two long stages
    each ended with one core idle for 0.1-0.2 s; at 10 ms ticks the run took 7.51 s against
    7.84 s (medians of seven alternating rounds, every one faster). The sampler only times the
    steps for Beam's msec counters, which it still does, waking up a hundred times a second.

    Beam gives no option for the period, so the default of its `sampling_period_ms` argument is
    set, only where the constructor still has that one default (another Beam keeps its own)."""
    from apache_beam.runners.worker import statesampler

    init = statesampler.StateSampler.__init__
    code = init.__code__
    if code.co_varnames[: code.co_argcount][-1:] == ("sampling_period_ms",) and (
        init.__defaults__ is not None and len(init.__defaults__) == 1
    ):
        init.__defaults__ = (SAMPLER_TICK_MS,)


def install() -> None:
    """Install the exit hook, route warnings through logging and end bundles promptly (once per
    process)."""
    atexit.register(exit_if_steps_run)
    logging.captureWarnings(True)
    end_bundles_promptly()


if in_worker():
    install()
