"""The block parser against its frozen predecessor (tests/support/parse_oracle): on every input, the same
records (values, types, order), the same quarantine rows (reasons and raw text included) and the
same count of lines read.

The parser may take shortcuts (a fast path for ordinary lines, cheaper checks) but never change
a decision of docs/decisions.md, "Reading records"; the oracle is the parser as it was before
those shortcuts, SQL and all. Inputs: the blocks of a simulated fleet, hypothesis-generated
blocks mixing hostile lines (tests/support/hostile.py) with lines in the layout exporters write
(json.dumps, default or compact separators) carrying every kind of bad value, and a list of near
misses written by hand.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpg.definitions.catalog import load_catalog
from mpg.pipelines.io import discover_trace_files, read_line_blocks
from mpg.simulate import simulate
from mpg.transforms.parse import BlockParser, ParsedBlock
from tests.support.hostile import ANY_TIME, HOSTILE_VALUES, canonical_lines, hostile_lines
from tests.support.parse_oracle import OracleParser
from tests.support.reference.model import (
    EVENT_TYPES,
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    PEAK_FLOPS,
    SPAN_KINDS,
    WORKLOAD_CLASSES,
)

SOURCES = ("scheduler", "runtime", "profiles")


@pytest.fixture(scope="module")
def parsers() -> tuple[BlockParser, OracleParser]:
    """The parser reads blocks in record batches of a few rows, so that even small blocks come
    back from DuckDB's threads out of order and must be put back in line order."""
    catalog = load_catalog()
    return BlockParser(catalog, batch_rows=7), OracleParser(catalog)


def _bits(table: pa.Table) -> list[np.ndarray]:
    """Every float column's bit patterns (nulls as 0): equal floats with different bits (-0.0
    and 0.0) would be different bytes in the published Parquet."""
    return [
        pc.fill_null(column, 0.0).to_numpy().view(np.int64)
        for column in table.columns
        if pa.types.is_floating(column.type)
    ]


def assert_same(got: ParsedBlock, expected: ParsedBlock) -> None:
    assert got.lines_read == expected.lines_read
    for name in ("records", "quarantine"):
        table, oracle = getattr(got, name), getattr(expected, name)
        assert table.schema.equals(oracle.schema, check_metadata=True), name
        if not table.equals(oracle):  # show the first row that differs
            rows, oracle_rows = table.to_pylist(), oracle.to_pylist()
            first = next(
                (i for i, (a, b) in enumerate(zip(rows, oracle_rows, strict=False)) if a != b),
                min(len(rows), len(oracle_rows)),
            )
            pytest.fail(
                f"{name} differ at row {first} ({len(rows)} vs {len(oracle_rows)} rows): "
                f"{rows[first : first + 1]} != {oracle_rows[first : first + 1]}"
            )
        for bits, oracle_bits in zip(_bits(table), _bits(oracle), strict=True):
            assert np.array_equal(bits, oracle_bits), f"{name}: float bits differ"


def both(
    parsers: tuple[BlockParser, OracleParser], source: str, data: bytes, first_line: int = 1
) -> None:
    parser, oracle = parsers
    file = f"{source}/block.jsonl"
    assert_same(
        parser.parse(source, file, data, first_line), oracle.parse(source, file, data, first_line)
    )


def test_a_simulated_fleet_parses_identically(
    parsers: tuple[BlockParser, OracleParser], tmp_path: Path
) -> None:
    simulate(seed=7, jobs=60, days=2, out=tmp_path)  # its few malformed lines included
    files, _ = discover_trace_files(tmp_path)
    for file in files:
        for block in read_line_blocks(file, block_bytes=512 * 1024):
            assert block.problem is None
            both(parsers, file.source, block.data, block.first_line)


# Timestamps as exporters write them (fractions, offsets), nearly all valid (some just inside
# or past the time window); ANY_TIME adds every kind of near miss.
def _written(at: datetime.datetime, fraction: str, zone: str) -> str:
    return at.strftime(f"%Y-%m-%dT%H:%M:%S{fraction}") + zone


def _usually(usual: st.SearchStrategy, *odd: object) -> st.SearchStrategy:
    """From `usual`, and one time in eight one of `odd` (a value just past a rule, say)."""
    return st.integers(0, 7).flatmap(lambda i: st.sampled_from(odd) if i == 0 else usual)


FRACTIONS = _usually(st.sampled_from(["", ".%f", ".123", ".5"]), ".123456789", ".%f999")
ZONES = _usually(st.sampled_from(["Z", "+00:00", "+05:30", "-05:00"]), "z", "+24:00", "-23:59")
INSTANTS = _usually(
    st.datetimes(datetime.datetime(2000, 1, 1), datetime.datetime(2099, 12, 31)),
    datetime.datetime(1999, 12, 31, 23, 59, 59),
    datetime.datetime(2100, 1, 1),
    datetime.datetime(2000, 1, 1, 0, 30),
)
EXPORTED_TIMES = st.builds(_written, INSTANTS, FRACTIONS, ZONES)

# Values as exporters write them, and now and then one just past a rule.
IDS = _usually(st.sampled_from(["j", "train-00017", "serve-01", "a b", "é"]), "", "a, b", ": x")
SMALL = _usually(st.integers(0, 99), -1, 2**63 - 1, 2**63, -(2**63))
CHIPS = _usually(st.integers(1, 64), 0, -8, 10**9, 10**9 + 1)
TEXTS = _usually(st.sampled_from(["team-lm", "4x4x8", "hlo_optimized"]), "", "a, b", "\n")
AMOUNTS = _usually(st.floats(0, 1e30), 1e30, 1.0000000000000002e30, -1.0, 0.0, -0.0)
STEP_TIMES = _usually(st.floats(1e-9, 1e4), 1e-9, 9.99e-10, 0.0, -1.0, 60)


def _names(values: tuple[str, ...] | list[str], *unknown: str) -> st.SearchStrategy[str]:
    return _usually(st.sampled_from(list(values)), *unknown)


def _optional(
    draw: st.DrawFn, record: dict[str, object], name: str, values: st.SearchStrategy
) -> None:
    if draw(st.booleans()):
        record[name] = draw(values)


@st.composite
def exported_records(draw: st.DrawFn, source: str) -> dict[str, object]:
    """A record as an exporter builds it, fields in the spec's order: mostly usable values."""
    zone = draw(ZONES)  # one exporter, one way of writing times
    time = st.builds(_written, INSTANTS, FRACTIONS, st.just(zone))
    if source == "runtime":
        kind = draw(_names(SPAN_KINDS, "warmup", ""))
        start = draw(INSTANTS)
        end = start + datetime.timedelta(seconds=draw(_usually(st.integers(0, 4000), -1)))
        fraction = draw(FRACTIONS)
        record = {"job_id": draw(IDS), "attempt": draw(SMALL), "kind": kind}
        record |= {"start": _written(start, fraction, zone), "end": _written(end, fraction, zone)}
        if kind in KINDS_WITH_STEP or draw(st.integers(0, 3)) == 0:
            record["step"] = draw(_usually(st.integers(-5, 10**6), -(2**63), 2**63, 5.0))
        return record
    if source == "profiles":
        record = {"job_id": draw(IDS), "ts": draw(time), "step": draw(SMALL)}
        record |= {"step_time_s": draw(STEP_TIMES), "model_flops": draw(AMOUNTS)}
        _optional(draw, record, "hbm_bytes", AMOUNTS)
        record["chips"] = draw(CHIPS)
        _optional(draw, record, "flops_source", TEXTS)
        return record
    kind = draw(_names(EVENT_TYPES, "JOB_RESIZE"))
    record = {"type": kind, "ts": draw(time), "job_id": draw(IDS)}
    if kind == "JOB_SUBMIT":
        record["chips_requested"] = draw(CHIPS)
        record["chip_generation"] = draw(_names(list(PEAK_FLOPS), "tpu-v9"))
        record["workload_class"] = draw(_names(WORKLOAD_CLASSES, "eval"))
        record["framework"] = draw(_names(FRAMEWORKS, "mxnet"))
        for name, values in (
            ("priority", SMALL),
            ("owner", TEXTS),
            ("team", TEXTS),
            ("queue", TEXTS),
            ("topology", TEXTS),
            ("allocated_from", TEXTS),
        ):
            _optional(draw, record, name, values)
    if kind.startswith("TASK_") or draw(st.integers(0, 5)) == 0:
        record["task_index"] = draw(SMALL)
    if kind == "TASK_SCHEDULE" or draw(st.integers(0, 5)) == 0:
        record["chips"] = draw(CHIPS)
    if kind == "JOB_END" or draw(st.integers(0, 5)) == 0:
        record["state"] = draw(_names(JOB_STATES, "DONE"))
    return record


# One change that takes a line off the fast path or just keeps it on: each value's text once
# more, in other spellings.
SPELLINGS = {
    int: lambda v: st.sampled_from([f"{v}.0", f'"{v}"', f"{v}e0", f"-{v}" if v else "-0", "true"]),
    float: lambda v: st.sampled_from(
        [repr(int(v)) if v == v // 1 else "1E2", "nan", "-inf", "1e309"]
    ),
    str: lambda v: st.sampled_from([json.dumps(v + "\\"), json.dumps(v.upper()), '"\\u0041"', "5"]),
}


@st.composite
def exported_lines(draw: st.DrawFn, source: str) -> bytes:
    """A line as json.dumps writes a record (default or compact separators); half the time with
    one change: a value spelled otherwise or hostile, a field missing, null, repeated or extra."""
    record = draw(exported_records(source))
    pairs = [
        (json.dumps(k), json.dumps(v, ensure_ascii=draw(st.booleans()))) for k, v in record.items()
    ]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(pairs) - 1))
        key, value = pairs[at]
        original = record[json.loads(key)]
        change = draw(
            st.sampled_from(["spelling", "hostile", "missing", "null", "repeated", "extra"])
        )
        if change == "spelling":
            pairs[at] = (key, draw(SPELLINGS[type(original)](original)))
        elif change == "hostile":
            pairs[at] = (key, draw(HOSTILE_VALUES))
        elif change == "missing":
            del pairs[at]
        elif change == "null":
            pairs[at] = (key, "null")
        elif change == "repeated":
            pairs.insert(draw(st.integers(at + 1, len(pairs))), (key, value))
        else:
            pairs.insert(draw(st.integers(0, len(pairs))), ('"extra"', draw(HOSTILE_VALUES)))
    comma, colon = draw(st.sampled_from([(", ", ": "), (",", ":")]))
    return ("{" + comma.join(f"{k}{colon}{v}" for k, v in pairs) + "}").encode()


TIMES = st.one_of(EXPORTED_TIMES.map(json.dumps), ANY_TIME)


@st.composite
def blocks(draw: st.DrawFn, exported_only: bool) -> tuple[str, bytes]:
    """A source and a block of its lines as exporters write them, some changed (or, unless
    `exported_only`, some hostile lines in that layout or any other); LF or CRLF endings, a
    final line break or not."""
    source = draw(st.sampled_from(SOURCES))
    line = exported_lines(source)
    if not exported_only:
        line = st.one_of(line, canonical_lines(source, TIMES), hostile_lines(source))
    lines = draw(st.lists(line, min_size=1, max_size=200))
    data = b"".join(line + draw(st.sampled_from([b"\n", b"\r\n"])) for line in lines)
    if lines[-1] and draw(st.booleans()):
        data = data.rstrip(b"\r\n")
    return source, data


# A few seconds in the suite; MPG_DIFFERENTIAL_EXAMPLES=2000 for a long search.
EXAMPLES = settings(
    max_examples=int(os.environ.get("MPG_DIFFERENTIAL_EXAMPLES", "15")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@EXAMPLES
@given(blocks(exported_only=True), st.integers(1, 10**9))
def test_exported_blocks_parse_identically(
    parsers: tuple[BlockParser, OracleParser], block: tuple[str, bytes], first_line: int
) -> None:
    source, data = block
    both(parsers, source, data, first_line)


@EXAMPLES
@given(blocks(exported_only=False), st.integers(1, 10**9))
def test_hostile_blocks_parse_identically(
    parsers: tuple[BlockParser, OracleParser], block: tuple[str, bytes], first_line: int
) -> None:
    source, data = block
    both(parsers, source, data, first_line)


SPAN = '{"job_id": "j", "attempt": 0, "kind": "step", "start": "2026-11-20T00:00:00.125Z", "end": "2026-11-20T00:01:00+01:00", "step": 1}'
SUBMIT = '{"type": "JOB_SUBMIT", "ts": "2026-11-20T00:00:00Z", "job_id": "j", "chips_requested": 8, "chip_generation": "tpu-v5p", "workload_class": "training", "framework": "jax", "priority": 100, "owner": "o", "team": "t", "queue": "q", "topology": "4x4"}'
TASK = '{"type": "TASK_SCHEDULE", "ts": "2026-11-20T00:00:00Z", "job_id": "j", "task_index": 0, "chips": 8}'
PROFILE = '{"job_id": "j", "ts": "2026-11-20T00:00:00Z", "step": 1, "step_time_s": 40.18, "model_flops": 2.0606344435721037e+17, "hbm_bytes": 2041228256815624.5, "chips": 8, "flops_source": "hlo_optimized"}'
# Each: a line in the exporters' layout, and near misses made by replacing one piece of it.
NEAR_MISSES = {
    ("runtime", SPAN): [
        ('"attempt": 0', ['"attempt": -0', '"attempt": 0.0', '"attempt": "0"', '"attempt": -1']),
        ('"attempt": 0', ['"attempt": 9223372036854775807', '"attempt": 9223372036854775808']),
        ('"step": 1', ['"step": -0', '"step": 1.0', '"step": null', '"step": 1e0', '"step": true']),
        ('"kind": "step"', ['"kind": "init"', '"kind": "warmup"', '"kind": "st\\u0065p"']),
        (
            '"job_id": "j"',
            ['"job_id": ""', '"job_id": "a\\"b"', '"job_id": "a\\\\"', '"job_id": 5'],
        ),
        ('"job_id": "j"', ['"job_id": "j", "job_id": "k"', '"\\u006aob_id": "j"', '"job_id":"j"']),
        (".125Z", [".125z", ".125", ".125+24:00", ".1234567891Z", "Z", ".125 Z", ".125+05:30"]),
        (
            "2026-11-20T00:00:00",
            ["2026-11-20t00:00:00", "2026-11-20 00:00:00", "2026-02-30T00:00:00"],
        ),
        (
            "2026-11-20T00:00:00",
            ["2026-11-20T24:00:00", "1999-12-31T23:59:59", "2099-12-31T23:59:59"],
        ),
        (
            "2026-11-20T00:00:00",
            ["2100-01-01T00:00:00", "2000-01-01T00:30:00", "2026-11-20T00:02:00"],
        ),
        (
            "2026-11-20T00:00:00",
            ["0000-01-01T00:00:00", "12026-11-20T00:00:00", "2026-11-20T00:00"],
        ),
        ('"step": 1}', ['"step": 1, "extra": 1}', '"step": 1,}', '"step": 1} ', '"step": 1}\t']),
        ('{"job_id"', [' {"job_id"', '{ "job_id"', '{"job_id" ']),
    ],
    ("scheduler", SUBMIT): [
        ('"chips_requested": 8', ['"chips_requested": 0', '"chips_requested": 1000000001']),
        ('"chips_requested": 8', ['"chips_requested": 1000000000', '"chips_requested": 8.0']),
        ('"priority": 100', ['"priority": -5', '"priority": null', '"priority": "100"']),
        ('"owner": "o"', ['"owner": ""', '"owner": 1', '"owner": "é"', '"owner": null']),
        ('"team": "t"', ['"team": ""', '"team": 1', '"team": "é"', '"team": null', '"team": []']),
        ('"queue": "q"', ['"queue": ""', '"queue": 1.5', '"queue": "a\\"b"', '"queue": null']),
        ('"owner": "o", "team": "t"', ['"team": "t", "owner": "o"', '"owner": "o"']),
        ('"team": "t", "queue": "q"', ['"queue": "q", "team": "t"', '"queue": "q"']),
        ('"chip_generation": "tpu-v5p"', ['"chip_generation": "tpu-v9"']),
        ('"type": "JOB_SUBMIT"', ['"type": "JOB_END"', '"type": "TASK_EVICT"', '"type": "X"']),
        (
            '"topology": "4x4"}',
            ['"topology": "4x4", "state": "FINISHED"}', '"topology": "4x4", "task_index": 1.5}'],
        ),
    ],
    ("scheduler", TASK): [
        ('"chips": 8', ['"chips": 0', '"chips": -8', '"chips": null', '"chips": 8, "state": 1']),
        (
            '"task_index": 0',
            ['"task_index": -1', '"task_index": 1e3', '"task_index": 99999999999999999999'],
        ),
        (
            '"type": "TASK_SCHEDULE"',
            ['"type": "TASK_FINISH"', '"type": "JOB_END"', '"type": "JOB_SUBMIT"'],
        ),
        (
            '"ts": "2026-11-20T00:00:00Z"',
            ['"ts": "2026-11-20T00:00:00"', '"ts": null', '"ts": "2026-11-20t00:00:00z"'],
        ),
        ('"ts": "2026-11-20T00:00:00Z"', ['"ts": "2026-11-20 00:00:00Z"']),
    ],
    ("profiles", PROFILE): [
        (
            '"step_time_s": 40.18',
            ['"step_time_s": 1e-09', '"step_time_s": 9.99e-10', '"step_time_s": 0.0'],
        ),
        (
            '"step_time_s": 40.18',
            [
                '"step_time_s": -1.5',
                '"step_time_s": NaN',
                '"step_time_s": nan',
                '"step_time_s": 40',
            ],
        ),
        (
            '"step_time_s": 40.18',
            ['"step_time_s": inf', '"step_time_s": 1e309', '"step_time_s": 5e-324'],
        ),
        (
            '"model_flops": 2.0606344435721037e+17',
            ['"model_flops": 1e+30', '"model_flops": 1.0000000000000002e+30'],
        ),
        (
            '"model_flops": 2.0606344435721037e+17',
            ['"model_flops": -0.0', '"model_flops": 0.0', '"model_flops": -1e-300'],
        ),
        (
            '"hbm_bytes": 2041228256815624.5',
            ['"hbm_bytes": null', '"hbm_bytes": -Infinity', '"hbm_bytes": 1e+31'],
        ),
        ('"chips": 8', ['"chips": 1000000001', '"chips": 8.0', '"chips": 0']),
        (
            '"flops_source": "hlo_optimized"',
            ['"flops_source": ""', '"flops_source": null', '"flops_source": 1'],
        ),
    ],
}


@pytest.mark.parametrize(("source", "line"), list(NEAR_MISSES))
def test_near_misses_of_ordinary_records_parse_identically(
    parsers: tuple[BlockParser, OracleParser], source: str, line: str
) -> None:
    lines = [line]
    for piece, replacements in NEAR_MISSES[(source, line)]:
        assert piece in line
        lines += [line.replace(piece, other, 1) for other in replacements]
    lines += [text.replace(", ", ",").replace(": ", ":") for text in lines]  # compact
    both(parsers, source, "\n".join(lines).encode() + b"\n")


@pytest.mark.parametrize(("source", "line"), list(NEAR_MISSES))
def test_blocks_of_ordinary_records_only_parse_identically(
    parsers: tuple[BlockParser, OracleParser], source: str, line: str
) -> None:
    """Where the fast path accepts every line, the full rule set never runs."""
    compact = line.replace(", ", ",").replace(": ", ":")
    both(parsers, source, "\n".join([line, compact] * 20).encode())
