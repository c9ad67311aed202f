"""What a simulation wrote: per source, how many lines and of which sort.

The counts are the answer key for the pipeline's own record counts: for every source,
`lines_written = records + duplicates + malformed`, and a correct pipeline reports `records`
accepted, `duplicates` exact duplicates and `malformed` quarantined.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceManifest:
    source: str  # scheduler, runtime or profiles
    files: tuple[str, ...]  # paths relative to the trace root
    lines_written: int  # every line in the files
    records: int  # distinct valid records
    duplicates: int  # extra exact copies of valid records (exporter retries)
    malformed: int  # lines the spec sends to the quarantine, each unique


@dataclass(frozen=True)
class SimulationManifest:
    seed: int
    jobs: int
    days: int
    start: datetime.date
    scheduler: SourceManifest
    runtime: SourceManifest
    profiles: SourceManifest

    @property
    def sources(self) -> tuple[SourceManifest, ...]:
        return (self.scheduler, self.runtime, self.profiles)

    def to_json(self) -> str:
        doc = dataclasses.asdict(self)
        doc["start"] = self.start.isoformat()
        return json.dumps(doc, indent=2) + "\n"
