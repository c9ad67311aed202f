"""How many job buckets a run cuts its work into: a worker's memory is one bucket's records,
whatever the size of the fleet."""

from __future__ import annotations

import math
from collections.abc import Iterable

from mpg.pipelines.io import TraceFile

# A job bucket holds about this many records (new ones and the history of its jobs): what one
# worker holds in memory at once, whatever the size of the fleet.
RECORDS_PER_BUCKET = 1_000_000
# Bytes of a trace line, for a first guess at a file's records (gzip: about 8 times fewer bytes).
_LINE_BYTES = 90
_GZIP_RATIO = 8


def estimated_records(files: Iterable[TraceFile]) -> int:
    """A first guess at the records in some trace files, from their sizes alone."""
    return sum(
        f.size * (_GZIP_RATIO if f.name.endswith(".gz") else 1) // _LINE_BYTES for f in files
    )


def bucket_count(records: int, records_per_bucket: int = RECORDS_PER_BUCKET) -> int:
    """Job buckets for a run that handles about `records` records: as many as keep each bucket
    within `records_per_bucket`, so a worker's memory does not grow with the fleet."""
    return max(1, math.ceil(records / records_per_bucket))
