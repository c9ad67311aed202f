"""The parse statements as rendered from the trace format's one declaration
(`mpg.transforms.parse_sql`): every field of `mpg.schemas.TRACE_FIELDS` read, typed and put in the
record, in the spec's order, by both statements of each source. (That the parse decides exactly
as before is tests/unit/test_parse_differential.py's: the same records and quarantine rows as the
frozen parser on every input.)"""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pytest

from mpg.definitions.catalog import load_catalog
from mpg.schemas import RECORD_SCHEMAS, SOURCES, TIME_FIELDS, TRACE_FIELDS
from mpg.transforms.parse import BlockParser, split_lines
from mpg.transforms.parse_sql import FULL_RULES_ONLY, parse_statement


@pytest.fixture(scope="module")
def parser() -> BlockParser:
    return BlockParser(load_catalog())


def test_the_spec_fields_are_each_statements_record(parser: BlockParser) -> None:
    for source in SOURCES:
        empty = split_lines(b"", 1)
        full = parser._run(source, empty)
        fast = parser._run(source, empty, ordinary=True)
        assert full.column_names == ["line", "raw", "reason", *TRACE_FIELDS[source]]
        assert fast.column_names == ["line", "ordinary", *TRACE_FIELDS[source]]


def _shape(statement: str, macro: str) -> dict[str, str]:
    literal = re.search(rf"{macro}\('lines', '(\{{.*?\}})'\)", statement)
    assert literal, macro
    return json.loads(literal.group(1))


def test_each_statement_reads_the_spec_fields_by_their_types() -> None:
    json_types = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.float64(): "DOUBLE"}
    for source in SOURCES:
        full = _shape(parse_statement(source), "mpg_json_objects")
        assert full == dict.fromkeys(TRACE_FIELDS[source], "JSON")
        fast = _shape(parse_statement(source, ordinary=True), "mpg_json_typed")
        read = [n for n in TRACE_FIELDS[source] if n not in FULL_RULES_ONLY.get(source, ())]
        assert list(fast) == read
        for name in read:
            type_ = RECORD_SCHEMAS[source].field(name).type
            assert fast[name] == ("VARCHAR" if name in TIME_FIELDS else json_types[type_])


def test_the_fast_path_compares_a_line_with_the_spec_fields_as_json_dumps_writes_them() -> None:
    statement = parse_statement("runtime", ordinary=True)
    written = re.search(r"mpg_written_as\(raw, (concat\(.*\))\)\n", statement)
    assert written and written.group(1) == (
        """concat('{"job_id": "', "job_id", '", "attempt": ', "attempt", ', "kind": "', "kind", """
        """'", "start": "', "start_text", '", "end": "', "end_text", '"', """
        """', "step": ' || "step", '}')"""
    )


def test_a_rank_sends_a_span_to_the_full_rules(parser: BlockParser) -> None:
    line = (
        '{"job_id": "j", "attempt": 0, "kind": "step", "start": "2026-11-20T00:00:00Z", '
        '"end": "2026-11-20T00:00:01Z", "step": 1, "rank": 3}'
    )
    fast = parser._run("runtime", split_lines(line.encode(), 1), ordinary=True)
    assert fast.column("ordinary").to_pylist() == [False]
    parsed = parser.parse("runtime", "runtime/r.jsonl", line.encode())
    assert parsed.records.select(["step", "rank"]).to_pylist() == [{"step": 1, "rank": 3}]
