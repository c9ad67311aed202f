"""Records per second that `BlockParser.parse` reads, per source, over a whole trace root, beside
the parser as it was before issue 13's fast path (tests/support/parse_oracle), in the same process.

    PYTHONPATH=. python bench/parse_fleet.py --traces FLEET [--repeat 3]

FLEET is a trace root, e.g. one written by
`python -c "from pathlib import Path; from mpg.simulate import simulate;
simulate(seed=1, jobs=2000, days=7, out=Path('FLEET'))"`. Its files are read into blocks of
32 MB of whole lines (as `mpg run` reads them) before any clock starts; then each source's blocks
are parsed by the old and the new parser in turn, `--repeat` times, and the best wall and CPU
seconds of each are printed as JSON lines. Old and new must return identical blocks (records,
quarantine, lines read), or the script stops. On a shared machine, compare the two in one run:
absolute figures move with other load.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mpg.definitions.catalog import load_catalog
from mpg.pipelines.io import DEFAULT_BLOCK_BYTES, LineBlock, discover_trace_files, read_line_blocks
from mpg.schemas import SOURCES
from mpg.transforms.parse import BlockParser, ParsedBlock
from tests.support.parse_oracle import OracleParser


def _blocks(root: Path) -> dict[str, list[LineBlock]]:
    """Every block of every trace file under `root`, per source (lines set aside by the reader
    never reach a parser, so they are left out)."""
    files, _ = discover_trace_files(root)
    blocks: dict[str, list[LineBlock]] = {source: [] for source in SOURCES}
    for file in files:
        blocks[file.source] += [
            b for b in read_line_blocks(file, DEFAULT_BLOCK_BYTES) if b.problem is None
        ]
    return blocks


def _timed(
    parser: BlockParser | OracleParser, blocks: list[LineBlock]
) -> tuple[float, float, list[ParsedBlock]]:
    """Wall and CPU seconds to parse `blocks`, and what they parsed to."""
    wall, cpu = time.perf_counter(), time.process_time()
    parsed = [parser.parse(b.file.source, b.file.name, b.data, b.first_line) for b in blocks]
    return time.perf_counter() - wall, time.process_time() - cpu, parsed


def _same(new: list[ParsedBlock], old: list[ParsedBlock]) -> bool:
    return all(
        n.records.equals(o.records, check_metadata=True)
        and n.quarantine.equals(o.quarantine, check_metadata=True)
        and n.lines_read == o.lines_read
        for n, o in zip(new, old, strict=True)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    catalog = load_catalog()
    parsers = {"old": OracleParser(catalog), "new": BlockParser(catalog)}
    for source, blocks in _blocks(args.traces).items():
        best = {name: (float("inf"), float("inf")) for name in parsers}
        for _ in range(args.repeat):
            results = {}
            for name, block_parser in parsers.items():
                wall, cpu, results[name] = _timed(block_parser, blocks)
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
            if not _same(results["new"], results["old"]):
                raise SystemExit(f"{source}: the new parser's output differs from the old one's")
        lines = sum(p.lines_read for p in results["new"])
        row: dict[str, object] = {"source": source, "lines": lines}
        for name, (wall, cpu) in best.items():
            row |= {f"{name}_s": round(wall, 3), f"{name}_cpu_s": round(cpu, 3)}
            row[f"{name}_lines_per_s"] = round(lines / wall)
        row["speedup"] = round(best["old"][0] / best["new"][0], 2)
        row["cpu_speedup"] = round(best["old"][1] / best["new"][1], 2)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
