"""One frozen, validated options object per pipeline run.

`mpg run` splits its own flags from Beam's (`parse_known_args`): everything it does not know
(`--runner`, `--project`, `--temp_location`, ...) is handed to Beam untouched, so the same
command runs locally or on a distributed runner.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from mpg.core.errors import OptionsError
from mpg.definitions.metrics import DEFAULT_METRIC_VERSION, METRIC_VERSIONS
from mpg.output.store import CONFIG
from mpg.pipelines.bigquery_target import BigQueryTarget
from mpg.pipelines.io import DEFAULT_BLOCK_BYTES
from mpg.pipelines.sizing import RECORDS_PER_BUCKET
from mpg.storage import Storage

# Beam's default runner first tries to download the Prism runner; name one that runs in-process.
DEFAULT_BEAM_ARGS = ("--runner=FnApiRunner",)


@dataclass(frozen=True)
class RunOptions:
    # A folder, or a gs:// or s3:// prefix; a pathlib.Path is taken as its string, so that run
    # records and logs (JSON) hold plain text whichever a caller passed.
    traces: str
    out: str  # likewise
    buckets: int | None = None  # job buckets; None: as many as the data needs
    records_per_bucket: int = RECORDS_PER_BUCKET
    metric_versions: tuple[str, ...] = (DEFAULT_METRIC_VERSION,)
    current_metric_version: str = DEFAULT_METRIC_VERSION  # what the *_current views show
    block_bytes: int = DEFAULT_BLOCK_BYTES
    full: bool = False  # recompute everything from the trace files, whatever is stored
    beam_args: tuple[str, ...] = field(default=DEFAULT_BEAM_ARGS)
    # Also publish to BigQuery (the DuckDB snapshot is always built); None: DuckDB only.
    bigquery: BigQueryTarget | None = None
    # The least severe log records shown on the terminal (mpg.pipelines.logs); None: warnings
    # and errors, Beam's own about its workers left to the run's log file.
    log_level: str | None = None

    def __post_init__(self) -> None:
        for name in ("traces", "out"):
            object.__setattr__(self, name, os.fspath(getattr(self, name)))
        if self.buckets is not None and not 1 <= self.buckets <= 1_000_000:
            raise OptionsError(f"--buckets must be between 1 and 1000000, not {self.buckets}")
        if self.records_per_bucket < 1:
            raise OptionsError("--records-per-bucket must be at least 1")
        unknown = [v for v in self.metric_versions if v not in METRIC_VERSIONS]
        if unknown:
            raise OptionsError(
                f"unknown metric version {unknown[0]} (known: {', '.join(METRIC_VERSIONS)})"
            )
        if self.current_metric_version not in self.metric_versions:
            raise OptionsError(
                f"the current metric version {self.current_metric_version} (from "
                f"{Storage(self.out).uri_of(CONFIG)}, v1 without it) is not among those this run "
                f"computes "
                f"({', '.join(self.metric_versions)}): add --metric-version "
                f"{self.current_metric_version}"
            )
        if self.block_bytes < 1024:
            raise OptionsError("--block-bytes must be at least 1024")
        out, traces = Storage(self.out), Storage(self.traces)
        if out.uri == traces.uri:
            raise OptionsError("--out must not be the trace root itself")
        if not out.remote and out.exists() and not out.is_dir():
            raise OptionsError(f"--out {self.out} exists and is not a folder")
