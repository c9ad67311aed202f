"""Deliver one source's lines the way real exporters do: shuffled, split over several files,
some gzipped, with retried (duplicate) records and a few malformed lines mixed in.

Output is byte-for-byte reproducible: the order, the split and the duplicates come from the
given generator, and gzip members carry no file name and mtime 0.
"""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl

from mpg.simulate.manifest import SourceManifest
from mpg.storage import Storage

DUPLICATE_SHARE = 0.002  # of valid records, each then written twice
MIN_DUPLICATES = 3
LINES_PER_FILE = 250_000
_FILE_STEM = {"scheduler": "events", "runtime": "spans", "profiles": "profiles"}
_MIN_FILES = {"scheduler": 3, "runtime": 3, "profiles": 2}


def _file_names(source: str, count: int, rng: np.random.Generator) -> list[str]:
    """Alternate plain and gzipped files, starting at random, so both kinds are present."""
    first_gz = bool(rng.integers(2))
    stem = _FILE_STEM[source]
    return [
        f"{stem}-{i:03d}.jsonl.gz" if (i % 2 == 0) == first_gz else f"{stem}-{i:03d}.jsonl"
        for i in range(count)
    ]


def _cuts(total: int, count: int, rng: np.random.Generator) -> list[int]:
    """Boundaries of `count` files of uneven but comparable sizes, none empty."""
    shares = rng.dirichlet(np.full(count, 4.0))
    inner = np.rint(np.cumsum(shares)[:-1] * (total - count)).astype(np.int64) + np.arange(1, count)
    return [0, *inner.tolist(), total]


def _write(root: Storage, path: str, lines: pl.Series) -> None:
    data = (lines.str.join("\n").item() + "\n").encode("utf-8")
    with root.open_output(path) as raw:
        if path.endswith(".gz"):
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as gz:
                gz.write(data)
        else:
            raw.write(data)


def deliver(
    source: str, valid: pl.Series, malformed: list[str], rng: np.random.Generator, root: Storage
) -> SourceManifest:
    """Write `valid` (distinct records) plus duplicates of some and `malformed` under
    `root/source/`, and say what was written."""
    if len(set(malformed)) != len(malformed):
        raise ValueError(f"{source}: malformed lines must be unique")
    n = valid.len()
    duplicates = min(n, max(MIN_DUPLICATES, round(n * DUPLICATE_SHARE)))
    copies = valid.gather(np.sort(rng.choice(n, size=duplicates, replace=False)))
    lines = pl.concat([valid, copies, pl.Series("line", malformed, pl.String)])
    lines = lines.gather(rng.permutation(lines.len()))

    total = lines.len()
    count = min(total, max(_MIN_FILES[source], -(-total // LINES_PER_FILE)))
    cuts = _cuts(total, count, rng)
    names = _file_names(source, count, rng)
    for name, begin, end in zip(names, cuts[:-1], cuts[1:], strict=True):
        _write(root, f"{source}/{name}", lines.slice(int(begin), int(end - begin)))
    return SourceManifest(
        source=source,
        files=tuple(f"{source}/{name}" for name in names),
        lines_written=total,
        records=n,
        duplicates=duplicates,
        malformed=len(malformed),
    )
