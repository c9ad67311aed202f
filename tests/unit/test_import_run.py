"""Importing the pipeline for `mpg run` and `mpg backfill` (`mpg.cli.command._import_run`)
pauses Python's cyclic collector and freezes what the first import made (docs/decisions.md, "The
collector while importing"); the collector's own state is the caller's, before and after."""

from __future__ import annotations

import gc
import subprocess
import sys

from mpg.cli.command import _import_run

_FIRST_IMPORT = """
import gc
from mpg.cli.command import _import_run
before = gc.get_freeze_count()
run = _import_run()
print(gc.isenabled(), before, gc.get_freeze_count() > 100_000, run.__module__)
"""


def test_the_first_import_freezes_what_it_made_and_collects_again() -> None:
    shown = subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORT], capture_output=True, text=True, check=True
    )
    assert shown.stdout.split() == ["True", "0", "True", "mpg.pipelines.run"]


def test_a_later_import_leaves_the_collector_as_it_found_it() -> None:
    _import_run()  # the pipeline is in this process now, whatever ran before
    before, frozen = gc.isenabled(), gc.get_freeze_count()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert _import_run().__module__ == "mpg.pipelines.run"
            assert (gc.isenabled(), gc.get_freeze_count()) == (enabled, frozen)
    finally:
        (gc.enable if before else gc.disable)()
