"""What a snapshot's state was computed under, so that a run knows whether it may update it.

A snapshot made by other code or other metric versions is not updated: the run computes
everything again and says why (`StateKey.mismatch`). Backfilled versions (`mpg backfill`) carry
the day ranges they cover, so that a version the runs start computing needs no recomputation of
history a backfill already covers.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Iterable
from dataclasses import dataclass


def _date(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def _covers(spans: Iterable[tuple[datetime.date, datetime.date]], days: tuple) -> bool:
    return any(a <= days[0] and days[1] <= b for a, b in spans)


# Per backfilled metric version, the day ranges (first, last) it has rows for.
Coverage = tuple[tuple[str, tuple[tuple[datetime.date, datetime.date], ...]], ...]


@dataclass(frozen=True)
class StateKey:
    """What a snapshot's state must match for a run to update it rather than start over."""

    code_version: str
    metric_versions: tuple[str, ...]
    # What the `*_current` views show: a change needs a new database, not new computation.
    current_metric_version: str
    # Versions backfilled over some days only (`mpg backfill`): version -> (first, last) ranges.
    coverage: Coverage = ()
    # The BigQuery dataset this state is published to in full ("" for none): a run publishing
    # to the same one again loads only the days that changed.
    bigquery: str = ""

    def encode(self) -> bytes:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, default=str).encode()

    @classmethod
    def decode(cls, raw: bytes) -> StateKey:
        fields = json.loads(raw)
        fields.pop("buckets", None)  # snapshots of the fixed-bucket layout
        fields["metric_versions"] = tuple(fields["metric_versions"])
        fields["coverage"] = tuple(
            (v, tuple((_date(a), _date(b)) for a, b in spans)) for v, spans in fields["coverage"]
        )
        return cls(**fields)

    def covered(self, version: str) -> tuple[tuple[datetime.date, datetime.date], ...]:
        """The day ranges `version` is backfilled over (none for a version every run computes)."""
        return dict(self.coverage).get(version, ())

    def with_coverage(self, version: str, first: datetime.date, last: datetime.date) -> StateKey:
        """This key with `version` also covering first..last (ranges merged, sorted)."""
        spans = sorted([*self.covered(version), (first, last)])
        merged: list[tuple[datetime.date, datetime.date]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1] + datetime.timedelta(days=1):
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        coverage = dict(self.coverage)
        coverage[version] = tuple(merged)
        return dataclasses.replace(self, coverage=tuple(sorted(coverage.items())))

    @property
    def computed_versions(self) -> tuple[str, ...]:
        """Every version a recomputed job gets rows of: the runs' own, then backfilled ones."""
        return tuple(dict.fromkeys([*self.metric_versions, *dict(self.coverage)]))

    def mismatch(
        self, other: StateKey, days: tuple[datetime.date, datetime.date] | None
    ) -> str | None:
        """Why a state made under `other` (whose job tables span `days`) cannot be updated under
        this key, or None. A version the runs start computing is no reason when a backfill
        already covers every published day: history needs no recomputation then."""
        added = [v for v in self.metric_versions if v not in other.metric_versions]
        dropped = [v for v in other.metric_versions if v not in self.metric_versions]
        if dropped or any(days and not _covers(other.covered(v), days) for v in added):
            old, new = ",".join(other.metric_versions), ",".join(self.metric_versions)
            return f"metric versions changed ({old} -> {new})"
        if other.code_version != self.code_version:
            return f"mpg changed ({other.code_version} -> {self.code_version})"
        return None
