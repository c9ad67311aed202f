"""Seconds one `BlockParser.parse` call takes per source, on ~100k lines of the sample fleet.

    python bench/parse_block.py [--lines 100000] [--repeat 7]

The lines of `data/sample_traces/<source>/` are repeated until there are `--lines` of them and
parsed as one block, `--repeat` times; the median is printed. It isolates the parse SQL, so a
change to a check in `sql/parse/` can be priced before `make bench` prices the whole ingest.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

from mpg.definitions.catalog import load_catalog
from mpg.schemas import SOURCES
from mpg.transforms.parse import BlockParser

SAMPLE = Path(__file__).parent.parent / "data" / "sample_traces"


def _block(source: str, lines: int) -> bytes:
    """The source's sample lines, repeated to `lines` lines, as one block."""
    text = b""
    for path in sorted((SAMPLE / source).glob("*.jsonl*")):
        data = path.read_bytes()
        text += gzip.decompress(data) if path.name.endswith(".gz") else data
    sample = text.splitlines(keepends=True)
    return b"".join(sample[i % len(sample)] for i in range(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    block_parser = BlockParser(load_catalog())
    for source in SOURCES:
        block = _block(source, args.lines)
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            block_parser.parse(source, f"{source}/bench.jsonl", block)
            seconds.append(time.perf_counter() - started)
        median = statistics.median(seconds)
        print(json.dumps({"source": source, "lines": args.lines, "median_s": round(median, 4)}))
    block_parser.close()


if __name__ == "__main__":
    main()
