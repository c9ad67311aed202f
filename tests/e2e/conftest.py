"""Fixtures that several end-to-end test files share.

A session fixture is built once per session (per pytest-xdist worker) only where it is defined in
a conftest: defined in tests/support and imported by each test file, pytest builds it once per
file that imports it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.report_fleet import published_hostile_fleet


@pytest.fixture(scope="session")
def hostile_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile fleet (tests/support/report_fleet.py), published once for every report test
    of the session. Read only: a test that runs `mpg run` into it works on a copy."""
    return published_hostile_fleet(tmp_path_factory.mktemp("report"))
