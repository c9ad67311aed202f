r"""The domain steps as Beam PTransforms: thin wrappers that apply the pure functions to coarse
elements (blocks of lines), so Beam's per-element cost is paid per block, not per record. Blocks
are parsed on the process's parsing threads (`PARSERS`), so that one file's blocks, or a worker's
last ones, are parsed two at a time as the fleet's many files are.

    blocks | ParseTraceRecords(catalog) | WriteParsedRecords ...  (mpg.pipelines.ingest)
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from mpg.definitions.catalog import ChipCatalog
from mpg.schemas import RECORD_SCHEMAS
from mpg.transforms.parse import BlockParser, ParsedBlock, quarantine_row

# Blocks one process parses at once, whatever its worker threads: each parse runs on its parsing
# thread (one DuckDB thread), and two at once keep two cores busy while the worker threads read
# blocks and write what was parsed. A worker thread hands a block to them and goes on reading;
# handing over one more than PARSERS, it waits for its oldest, so memory holds a few blocks
# more, not a file. (A distributed runner starts a process per core: two each is enough there.)
PARSERS = 2
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()


def _parsers() -> ThreadPoolExecutor:
    """The process's parsing threads, started on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(PARSERS, thread_name_prefix="mpg-parse")
        return _pool


def _parse_here(catalog: ChipCatalog, block) -> ParsedBlock:
    """`parse_block` on this parsing thread's own BlockParser (a DuckDB connection serves one
    thread at a time) for the catalog's chip generations, the one thing a parser takes from it.
    One DuckDB thread each: the parsing threads are the parallelism (a 2M-span fleet as one file
    per source took 8.3 s against 8.7 s with DuckDB's two threads each, five pairs)."""
    parsers: dict[tuple[str, ...], BlockParser] = _local.__dict__.setdefault("parsers", {})
    key = tuple(catalog.generations)
    if key not in parsers:
        parsers[key] = BlockParser(catalog, threads=1)
    return parse_block(parsers[key], block)


class _ParseBlocks(beam.DoFn):
    """Hands each block to the process's parsers (`PARSERS`) and emits the parsed blocks in the
    order it handed them over, each once it and those before it are done (each names its file
    and lines, so the order is not needed); the rest when the bundle ends."""

    def __init__(self, catalog: ChipCatalog) -> None:
        self._catalog = catalog
        self._pending: deque[Future[ParsedBlock]] = deque()

    def start_bundle(self) -> None:
        self._pending = deque()

    def process(self, block) -> Iterator[ParsedBlock]:  # block: mpg.pipelines.io.LineBlock
        self._pending.append(_parsers().submit(_parse_here, self._catalog, block))
        while len(self._pending) > PARSERS or (self._pending and self._pending[0].done()):
            yield self._pending.popleft().result()

    def finish_bundle(self) -> Iterator:
        while self._pending:
            yield GlobalWindows.windowed_value(self._pending.popleft().result())


def parse_block(parser: BlockParser, block) -> ParsedBlock:  # block: mpg.pipelines.io.LineBlock
    """One block of lines parsed; or the record the reader set aside, quarantined."""
    source, name = block.file.source, block.file.name
    if block.problem is None:
        return parser.parse(source, name, block.data, block.first_line, block.bounds)
    # A line over the length limit, or a corrupt stream's unreadable rest: one quarantined record,
    # even where its text happens to parse.
    return ParsedBlock(
        source=source,
        file=name,
        records=RECORD_SCHEMAS[source].empty_table(),
        quarantine=quarantine_row(
            source, name, block.first_line, block.problem, block.data.decode("utf-8", "replace")
        ),
        lines_read=1,
    )


class ParseTraceRecords(beam.PTransform):
    """Blocks of trace lines -> ParsedBlock (typed records, quarantine rows)."""

    def __init__(self, catalog: ChipCatalog) -> None:
        super().__init__()
        self._catalog = catalog

    def expand(self, blocks):
        parse = beam.ParDo(_ParseBlocks(self._catalog)).with_output_types(ParsedBlock)
        return blocks | "ParseBlock" >> parse
