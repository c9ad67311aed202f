"""Fuzzing the parsers with hostile input (hypothesis): no crash, no hang, every record accepted
or quarantined with a reason, records read = accepted + duplicates + quarantined, and every
decision the same as the independent reference's (tests/support/reference).

Two levels here: one block through `BlockParser.parse`; one file through `read_line_blocks` and
the parser (random bytes, damaged gzip, over-long lines). A whole hostile trace root through the
real `mpg run`: tests/e2e/test_hostile_run.py.
"""

from __future__ import annotations

import datetime
import gzip
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpg.definitions.catalog import load_catalog
from mpg.pipelines.io import EXCERPT_BYTES, MAX_LINE_BYTES, TraceFile, read_line_blocks
from mpg.transforms.parse import BlockParser, ParsedBlock
from mpg.transforms.steps import parse_block
from tests.support.hostile import hostile_lines
from tests.support.reference import reason_class
from tests.support.reference.records import BadRecordError, parse_line, read_records

SOURCES = ("scheduler", "runtime", "profiles")
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def parser() -> BlockParser:
    return BlockParser(load_catalog())


def _verdicts(parsed: ParsedBlock) -> dict[int, dict | str]:
    """Per line number: the accepted record's fields, or the quarantine reason's class."""
    verdicts: dict[int, dict | str] = {}
    for row in parsed.quarantine.to_pylist():
        assert row["reason"], f"line {row['line']}: quarantined without a reason"
        assert row["line"] not in verdicts, f"line {row['line']} quarantined twice"
        verdicts[row["line"]] = reason_class(row["reason"])
    for record in parsed.records.to_pylist():
        assert record["line"] not in verdicts, f"line {record['line']} accepted and quarantined"
        verdicts[record["line"]] = _as_reference_fields(record)
    return verdicts


def _as_reference_fields(record: dict) -> dict:
    """An accepted record's values as the reference keeps them: instants in microseconds."""
    fields = {}
    for name, value in record.items():
        if name in ("file", "line") or value is None:
            continue
        if isinstance(value, datetime.datetime):
            value = (value - EPOCH) // datetime.timedelta(microseconds=1)
        fields[name] = value
    return fields


def _reference_verdict(source: str, line: bytes) -> dict | str:
    try:
        return parse_line(source, line)
    except BadRecordError as bad:
        return reason_class(str(bad))


@st.composite
def blocks(draw: st.DrawFn) -> tuple[str, list[bytes], bytes]:
    """A source, its lines, and the block that holds them (LF or CRLF endings, a final line
    break or not)."""
    source = draw(st.sampled_from(SOURCES))
    lines = draw(st.lists(hostile_lines(source), min_size=1, max_size=25))
    endings = draw(st.lists(st.sampled_from([b"\n", b"\r\n"]), min_size=len(lines)))
    data = b"".join(line + end for line, end in zip(lines, endings, strict=False))
    if lines[-1] and draw(st.booleans()):  # no final line break: the last line ends the data
        data = data.removesuffix(endings[len(lines) - 1])
    return source, lines, data


@settings(FUZZ, max_examples=300)
@given(blocks(), st.integers(1, 10**9))
def test_every_line_is_accepted_or_quarantined_as_the_reference_decides(
    parser: BlockParser, block: tuple[str, list[bytes], bytes], first_line: int
) -> None:
    source, lines, data = block
    parsed = parser.parse(source, f"{source}/fuzz.jsonl", data, first_line)
    assert parsed.lines_read == len(lines)
    got = _verdicts(parsed)
    assert sorted(got) == list(range(first_line, first_line + len(lines)))
    for number, line in enumerate(lines, start=first_line):
        # A line's own '\r' before its line break belongs to the break (docs/decisions.md).
        expected = _reference_verdict(source, line.removesuffix(b"\r"))
        assert got[number] == expected, f"line {line!r}"


# --------------------------------------------------------------------------------------------
# Files: read_line_blocks, then the parser


@st.composite
def trace_files(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """A source, a file name and the file's bytes: hostile lines, now and then one over the
    length limit, stored plain, gzipped (one member or two), or gzipped and then truncated or
    with bytes flipped; or random bytes."""
    source = draw(st.sampled_from(SOURCES))
    lines = draw(st.lists(hostile_lines(source), max_size=30))
    if lines and draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = lines[at] + b"x" * (MAX_LINE_BYTES + draw(st.integers(-1, 2)))
    text = b"".join(line + draw(st.sampled_from([b"\n", b"\r\n"])) for line in lines)
    if text.endswith(b"\n") and draw(st.booleans()):
        text = text.removesuffix(b"\n")
    form = draw(st.sampled_from(["plain", "gzip", "members", "truncated", "flipped", "random"]))
    packed = gzip.compress(text, mtime=0)
    if form == "plain":
        return source, "a.jsonl", text
    if form == "random":
        return source, draw(st.sampled_from(["a.jsonl", "a.jsonl.gz"])), draw(st.binary())
    if form == "members":
        cut = draw(st.integers(0, len(text)))
        return source, "a.jsonl.gz", gzip.compress(text[:cut]) + gzip.compress(text[cut:])
    if form == "truncated":
        return source, "a.jsonl.gz", packed[: draw(st.integers(0, len(packed)))]
    if form == "flipped":
        damaged = bytearray(packed)
        for at in draw(st.lists(st.integers(0, len(packed) - 1), min_size=1, max_size=3)):
            damaged[at] ^= draw(st.integers(1, 255))
        return source, "a.jsonl.gz", bytes(damaged)
    return source, "a.jsonl.gz", packed


def _read_and_parse(parser: BlockParser, file: TraceFile) -> tuple[int, dict[int, object]]:
    """Lines read, and per line number the record's fields or (reason class, raw text)."""
    read, verdicts = 0, {}
    for block in read_line_blocks(file, block_bytes=4096):
        parsed = parse_block(parser, block)
        read += parsed.lines_read
        raw = {r["line"]: r["raw"] for r in parsed.quarantine.to_pylist()}
        for number, verdict in _verdicts(parsed).items():
            assert number not in verdicts, f"line {number} read twice"
            verdicts[number] = (verdict, raw[number]) if number in raw else verdict
    return read, verdicts


def _reference_file(root: Path) -> tuple[int, dict[int, object]]:
    valid, rejected, counts = read_records(root)
    verdicts: dict[int, object] = {r.line: r.fields for r in valid}
    verdicts.update({r.line: (reason_class(r.reason), r.raw) for r in rejected})
    return sum(c.read for c in counts.values()), verdicts


@settings(FUZZ, max_examples=120)
@given(trace_files())
def test_any_file_is_read_line_by_line_as_the_reference_reads_it(
    parser: BlockParser, case: tuple[str, str, bytes]
) -> None:
    source, name, content = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / source / name
        path.parent.mkdir()
        path.write_bytes(content)
        read, got = _read_and_parse(parser, TraceFile.at(tmp, f"{source}/{name}", source))
        expected_read, expected = _reference_file(Path(tmp))
    assert read == expected_read == len(got)
    assert sorted(got) == list(range(1, read + 1))
    assert got == expected


def test_a_20_mb_line_and_a_100k_deep_line_are_read_and_accounted(
    parser: BlockParser, tmp_path: Path
) -> None:
    deep = b'{"job_id": "j", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert len(deep) < MAX_LINE_BYTES
    text = b"\n".join([b"{}", b"x" * (20 << 20), deep, b"[" * 200_000, b"\xff"]) + b"\n"
    path = tmp_path / "runtime" / "a.jsonl"
    path.parent.mkdir()
    path.write_bytes(text)
    read, got = _read_and_parse(parser, TraceFile.at(str(tmp_path), "runtime/a.jsonl", "runtime"))
    assert read == 5
    assert {n: v[0] for n, v in got.items()} == {
        1: "missing",
        2: "line",  # line too long
        3: "missing",  # valid JSON (DuckDB reads 100k levels); `attempt` is missing
        4: "invalid json",
        5: "invalid utf-8",
    }
    assert got[2][1] == "x" * EXCERPT_BYTES
