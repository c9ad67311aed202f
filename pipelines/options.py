"""One frozen, validated options object per pipeline run.

`mpg run` splits its own flags from Beam's (`parse_known_args`): everything it does not know
(`--runner`, `--project`, `--temp_location`, ...) is handed to Beam untouched, so the same
command runs locally or on a distributed runner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mpg.config import CONFIG_FILE
from mpg.errors import OptionsError
from mpg.metrics import DEFAULT_METRIC_VERSION, METRIC_VERSIONS
from mpg.pipelines.bigquery_target import BigQueryTarget
from mpg.pipelines.io import DEFAULT_BLOCK_BYTES

# Beam's default runner first tries to download the Prism runner; name one that runs in-process.
DEFAULT_BEAM_ARGS = ("--runner=FnApiRunner",)


@dataclass(frozen=True)
class RunOptions:
    traces: Path
    out: Path
    buckets: int = 64
    metric_versions: tuple[str, ...] = (DEFAULT_METRIC_VERSION,)
    current_metric_version: str = DEFAULT_METRIC_VERSION  # what the *_current views show
    block_bytes: int = DEFAULT_BLOCK_BYTES
    full: bool = False  # recompute everything from the trace files, whatever is stored
    beam_args: tuple[str, ...] = field(default=DEFAULT_BEAM_ARGS)
    # Also publish to BigQuery (the DuckDB snapshot is always built); None: DuckDB only.
    bigquery: BigQueryTarget | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.buckets <= 1_000_000:
            raise OptionsError(f"--buckets must be between 1 and 1000000, not {self.buckets}")
        unknown = [v for v in self.metric_versions if v not in METRIC_VERSIONS]
        if unknown:
            raise OptionsError(
                f"unknown metric version {unknown[0]} (known: {', '.join(METRIC_VERSIONS)})"
            )
        if self.current_metric_version not in self.metric_versions:
            raise OptionsError(
                f"the current metric version {self.current_metric_version} (from "
                f"{self.out / CONFIG_FILE}, v1 without it) is not among those this run computes "
                f"({', '.join(self.metric_versions)}): add --metric-version "
                f"{self.current_metric_version}"
            )
        if self.block_bytes < 1024:
            raise OptionsError("--block-bytes must be at least 1024")
        if self.out.resolve() == self.traces.resolve():
            raise OptionsError("--out must not be the trace root itself")
        if self.out.exists() and not self.out.is_dir():
            raise OptionsError(f"--out {self.out} exists and is not a folder")
