"""Start bqemulator offline: `python launch.py start --rest-port P ...` with the emulator's venv.

At start bqemulator installs DuckDB's spatial extension (for GEOGRAPHY) and fails without the
network; this launcher loads it if it is already there and otherwise goes on without it (no
GEOGRAPHY, which mpg does not use). Runs in the emulator's own venv, never the project's.
"""

from __future__ import annotations

import contextlib

from bqemulator.cli import main
from bqemulator.storage.engine import DuckDBEngine


def _load_spatial_if_present(self: DuckDBEngine) -> None:
    with contextlib.suppress(Exception):  # duckdb's errors: the extension is not installed
        self._connection.execute("LOAD spatial")


DuckDBEngine._load_spatial = _load_spatial_if_present

if __name__ == "__main__":
    main()
