r"""The domain steps as Beam PTransforms: thin wrappers that apply the pure functions to coarse
elements (blocks of lines), so Beam's per-element cost is paid per block, not per record.

    blocks | ParseTraceRecords(catalog) | WriteParsedRecords ...  (mpg.pipelines.ingest)
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam

from mpg.definitions.catalog import ChipCatalog
from mpg.schemas import RECORD_SCHEMAS
from mpg.transforms.parse import BlockParser, ParsedBlock, quarantine_row


class _ParseBlocks(beam.DoFn):
    def __init__(self, catalog: ChipCatalog) -> None:
        self._catalog = catalog
        self._parser: BlockParser | None = None

    def setup(self) -> None:
        self._parser = BlockParser(self._catalog)

    def teardown(self) -> None:
        if self._parser is not None:
            self._parser.close()

    def process(self, block) -> Iterator[ParsedBlock]:  # block: mpg.pipelines.io.LineBlock
        assert self._parser is not None
        yield parse_block(self._parser, block)


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
