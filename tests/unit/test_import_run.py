"""Importing the pipeline for `mpg run` and `mpg backfill` (`mpg.cli.command._import_run`)
pauses Python's cyclic collector and freezes what the import made (docs/decisions.md, "The
collector while importing"); the collector's own state is the caller's, before and after."""

from __future__ import annotations

import gc
import sys

import pytest

from mpg.cli.command import _import_run


@pytest.mark.parametrize("enabled", [True, False])
def test_the_import_leaves_the_collector_as_it_found_it(enabled: bool) -> None:
    before = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        run = _import_run()
        assert gc.isenabled() is enabled
        # the pipeline's modules, imported, are among the objects no collection scans
        assert gc.get_freeze_count() >= len(sys.modules)
        assert run.__module__ == "mpg.pipelines.run"
    finally:
        gc.unfreeze()
        (gc.enable if before else gc.disable)()
