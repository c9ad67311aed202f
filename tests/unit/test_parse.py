"""Parsing and validation of single lines: the spec's "Records that cannot be used", rule by rule."""

from __future__ import annotations

import json

import pytest

from mpg.definitions.catalog import load_catalog
from mpg.transforms.parse import BlockParser, split_lines

SUBMIT = {
    "type": "JOB_SUBMIT",
    "ts": "2026-11-20T00:00:00Z",
    "job_id": "j",
    "chips_requested": 8,
    "chip_generation": "tpu-v5p",
    "workload_class": "training",
    "framework": "jax",
}
SPAN = {
    "job_id": "j",
    "attempt": 0,
    "kind": "step",
    "start": "2026-11-20T00:00:00Z",
    "end": "2026-11-20T00:01:00Z",
    "step": 1,
}
PROFILE = {
    "job_id": "j",
    "ts": "2026-11-20T00:00:00Z",
    "step": 1,
    "step_time_s": 60.0,
    "model_flops": 1e15,
    "chips": 8,
}


@pytest.fixture(scope="module")
def parser() -> BlockParser:
    return BlockParser(load_catalog())


def _one(parser: BlockParser, source: str, line: bytes | str) -> tuple[dict | None, str | None]:
    data = line if isinstance(line, bytes) else line.encode()
    block = parser.parse(source, f"{source}/f.jsonl", data + b"\n")
    assert block.lines_read == 1
    if block.records.num_rows:
        return block.records.to_pylist()[0], None
    return None, block.quarantine.column("reason")[0].as_py()


def _with(base: dict, **changes: object) -> str:
    record = {**base, **changes}
    return json.dumps({k: v for k, v in record.items() if v is not ...})


@pytest.mark.parametrize(
    ("data", "first", "expected"),
    [
        (b"", 1, []),
        (b"a\n", 1, [(1, b"a")]),
        (b"a", 3, [(3, b"a")]),
        (b"a\r\n\nbc\nd", 5, [(5, b"a"), (6, b""), (7, b"bc"), (8, b"d")]),
        (b"\n\n", 1, [(1, b""), (2, b"")]),
        (b"a\r", 1, [(1, b"a")]),
        (b"\r\r\n\r\n", 1, [(1, b"\r"), (2, b"")]),
    ],
)
def test_split_lines(data: bytes, first: int, expected: list[tuple[int, bytes]]) -> None:
    table = split_lines(data, first)
    assert (
        list(
            zip(
                table.column("line").to_pylist(), table.column("raw_bytes").to_pylist(), strict=True
            )
        )
        == expected
    )


# fmt: off
UNUSABLE = [
    ("scheduler", "", "empty line"),
    ("scheduler", "   ", "empty line"),
    ("scheduler", b"\xff\xfe{}", "invalid UTF-8"),
    ("scheduler", '{"type": "JOB_SUBMIT"', "invalid JSON"),
    ("scheduler", "[1, 2]", "not a JSON object"),
    ("scheduler", _with(SUBMIT, type=...), "missing field: type"),
    ("scheduler", _with(SUBMIT, type="JOB_RESIZE"), "unknown type: JOB_RESIZE"),
    ("scheduler", _with(SUBMIT, ts="2026-11-20T00:00:00"), "unparseable time: ts"),
    ("scheduler", _with(SUBMIT, ts="2026-11-20T24:00:00Z"), "unparseable time: ts"),
    ("scheduler", _with(SUBMIT, ts="2026-02-30T00:00:00Z"), "unparseable time: ts"),
    ("scheduler", _with(SUBMIT, ts=1795143600), "wrong type: ts must be an RFC 3339 string"),
    ("scheduler", _with(SUBMIT, job_id=7), "wrong type: job_id must be a string"),
    ("scheduler", _with(SUBMIT, job_id=""), "out of range: job_id is empty"),
    ("scheduler", _with(SUBMIT, team=7), "wrong type: team must be a string"),
    ("scheduler", _with(SUBMIT, owner=1, queue=["q"]), "wrong type: owner must be a string"),
    ("scheduler", _with(SUBMIT, team="t", queue=["q"]), "wrong type: queue must be a string"),
    (
    "scheduler",
    _with(SUBMIT, chips_requested=0),
    "out of range: chips_requested must be between 1 and 1000000000",
    ),
    (
    "scheduler",
    _with(SUBMIT, chips_requested="8"),
    "wrong type: chips_requested must be an integer",
    ),
    (
    "scheduler",
    _with(SUBMIT, chips_requested=8.0),
    "wrong type: chips_requested must be an integer",
    ),
    (
    "scheduler",
    _with(SUBMIT, chips_requested=True),
    "wrong type: chips_requested must be an integer",
    ),
    (
    "scheduler",
    _with(SUBMIT, chips_requested=2**64),
    "out of range: chips_requested does not fit in 64 bits",
    ),
    ("scheduler", _with(SUBMIT, chips_requested=None), "missing field: chips_requested"),
    ("scheduler", _with(SUBMIT, chip_generation="tpu-v9"), "unknown chip_generation: tpu-v9"),
    ("scheduler", _with(SUBMIT, workload_class="eval"), "unknown workload_class: eval"),
    ("scheduler", _with(SUBMIT, framework="mxnet"), "unknown framework: mxnet"),
    ("scheduler", _with(SUBMIT, priority="high"), "wrong type: priority must be an integer"),
    (
    "scheduler",
    '{"type": "TASK_SCHEDULE", "ts": "2026-11-20T00:00:00Z", "job_id": "j", "task_index": -1, "chips": 4}',
    "out of range: task_index must be >= 0",
    ),
    (
    "scheduler",
    '{"type": "TASK_SCHEDULE", "ts": "2026-11-20T00:00:00Z", "job_id": "j", "task_index": 0}',
    "missing field: chips",
    ),
    (
    "scheduler",
    '{"type": "TASK_EVICT", "ts": "2026-11-20T00:00:00Z", "job_id": "j"}',
    "missing field: task_index",
    ),
    (
    "scheduler",
    '{"type": "JOB_END", "ts": "2026-11-20T00:00:00Z", "job_id": "j", "state": "DONE"}',
    "unknown state: DONE",
    ),
    ("runtime", _with(SPAN, end="2026-11-19T23:59:59Z"), "out of range: end < start"),
    ("runtime", _with(SPAN, kind="warmup"), "unknown kind: warmup"),
    ("runtime", _with(SPAN, attempt=-1), "out of range: attempt must be >= 0"),
    ("runtime", _with(SPAN, step=...), "missing field: step"),
    ("runtime", _with(SPAN, kind="checkpoint_save", step=...), "missing field: step"),
    ("profiles", _with(PROFILE, step_time_s=0), "out of range: step_time_s must be > 0"),
    (
    "profiles",
    '{"job_id": "j", "ts": "2026-11-20T00:00:00Z", "step": 1, "step_time_s": NaN, "model_flops": 1, "chips": 8}',
    "out of range: step_time_s is not finite",
    ),
    ("profiles", _with(PROFILE, model_flops=-1), "out of range: model_flops must be >= 0"),
    ("profiles", _with(PROFILE, chips=0), "out of range: chips must be between 1 and 1000000000"),
    ("profiles", _with(PROFILE, hbm_bytes="lots"), "wrong type: hbm_bytes must be a number"),
    ]
# fmt: on


@pytest.mark.parametrize(("source", "line", "reason"), UNUSABLE)
def test_unusable_records_are_quarantined_with_their_reason(
    parser: BlockParser, source: str, line: str | bytes, reason: str
) -> None:
    assert _one(parser, source, line) == (None, reason)


# fmt: off
USABLE = [
        (
            "scheduler",
            _with(SUBMIT, ts="2026-11-20T02:30:00.250+02:00"),
            "ts",
            "2026-11-20T00:30:00.250000+00:00",
        ),
        ("scheduler", _with(SUBMIT, priority=None, owner=None), "priority", None),
        ("scheduler", _with(SUBMIT, team="lm", queue=None), "team", "lm"),
        ("scheduler", _with(SUBMIT, team="lm", queue=""), "queue", ""),
        ("scheduler", _with(SUBMIT, extra_field={"ignored": True}), "chips_requested", 8),
        ("runtime", _with(SPAN, kind="init", step=...), "step", None),
        ("runtime", _with(SPAN, kind="init", step=3), "step", None),
        ("runtime", _with(SPAN, end=SPAN["start"]), "kind", "step"),
        ("profiles", _with(PROFILE, model_flops=110160000000000000), "model_flops", 1.1016e17),
        ("profiles", _with(PROFILE, hbm_bytes=None), "hbm_bytes", None),
    ]
# fmt: on


@pytest.mark.parametrize(("source", "line", "column", "value"), USABLE)
def test_usable_records_are_typed(
    parser: BlockParser, source: str, line: str, column: str, value: object
) -> None:
    record, reason = _one(parser, source, line)
    assert reason is None
    got = record[column]
    assert (got.isoformat() if hasattr(got, "isoformat") else got) == value


def test_block_keeps_line_numbers_and_raw_text(parser: BlockParser) -> None:
    data = "\n".join([_with(SPAN), "oops", _with(SPAN, step=2)]).encode()
    block = parser.parse("runtime", "runtime/a.jsonl", data, first_line=41)
    assert block.lines_read == 3
    assert block.records.column("line").to_pylist() == [41, 43]
    assert block.records.column("file").to_pylist() == ["runtime/a.jsonl"] * 2
    assert block.records.column("step").to_pylist() == [1, 2]
    assert block.quarantine.to_pylist() == [
        {
            "source": "runtime",
            "file": "runtime/a.jsonl",
            "line": 42,
            "reason": "invalid JSON",
            "raw": "oops",
            "job_id": None,
        }
    ]


def _verdict(parser: BlockParser, source: str, line: str | bytes) -> str:
    """'accepted', or the quarantine reason."""
    record, reason = _one(parser, source, line)
    return "accepted" if record is not None else str(reason)


OUTSIDE = "out of range: ts is outside 2000-01-01..2099-12-31"


@pytest.mark.parametrize(
    ("ts", "verdict"),
    [
        ("2000-01-01T00:00:00Z", "accepted"),
        ("2099-12-31T23:59:59.999999Z", "accepted"),
        ("2100-01-01T00:30:00+01:00", "accepted"),
        ("1999-12-31T23:59:59Z", OUTSIDE),
        ("2000-01-01T00:30:00+01:00", OUTSIDE),
        ("2100-01-01T00:00:00Z", OUTSIDE),
        ("1970-01-01T00:00:00Z", OUTSIDE),
        ("0000-01-01T00:00:00Z", OUTSIDE),
        ("9999-12-31T23:59:59-23:59", OUTSIDE),
    ],
)
def test_timestamps_before_2000_or_from_2100_on_are_out_of_range(
    parser: BlockParser, ts: str, verdict: str
) -> None:
    assert _verdict(parser, "scheduler", _with(SUBMIT, ts=ts)) == verdict


def test_timestamps_out_of_range_name_their_field(parser: BlockParser) -> None:
    line = _with(SPAN, end="9999-12-31T23:59:59Z")
    assert _verdict(parser, "runtime", line) == (
        "out of range: end is outside 2000-01-01..2099-12-31"
    )


CHIPS = "out of range: {} must be between 1 and 1000000000"


@pytest.mark.parametrize(
    ("source", "line", "verdict"),
    [
        ("scheduler", _with(SUBMIT, chips_requested=10**9), "accepted"),
        ("scheduler", _with(SUBMIT, chips_requested=10**9 + 1), CHIPS.format("chips_requested")),
        ("scheduler", _with(SUBMIT, chips_requested=-1), CHIPS.format("chips_requested")),
        (
            "scheduler",
            '{"type": "TASK_SCHEDULE", "ts": "2026-11-20T00:00:00Z", "job_id": "j", "task_index": 0, "chips": 9000000000000000000}',
            CHIPS.format("chips"),
        ),
        ("profiles", _with(PROFILE, chips=10**9 + 1), CHIPS.format("chips")),
    ],
)
def test_chip_counts_are_between_1_and_1000000000(
    parser: BlockParser, source: str, line: str, verdict: str
) -> None:
    assert _verdict(parser, source, line) == verdict


@pytest.mark.parametrize(
    ("changes", "verdict"),
    [
        ({"model_flops": 1e30, "hbm_bytes": 1e30, "step_time_s": 1e-9}, "accepted"),
        ({"model_flops": 1.0000000000000002e30}, "out of range: model_flops above 1e30"),
        ({"hbm_bytes": 1e31}, "out of range: hbm_bytes above 1e30"),
        ({"model_flops": 10**400}, "out of range: model_flops is not finite"),
        ({"step_time_s": 9.99e-10}, "out of range: step_time_s below 1e-9"),
        ({"step_time_s": 5e-324}, "out of range: step_time_s below 1e-9"),
        ({"step_time_s": -0.0}, "out of range: step_time_s must be > 0"),
    ],
)
def test_model_flops_and_hbm_bytes_at_most_1e30_step_time_s_at_least_1e_9(
    parser: BlockParser, changes: dict[str, float], verdict: str
) -> None:
    assert _verdict(parser, "profiles", _with(PROFILE, **changes)) == verdict


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        ('{"job_id": "a", "job_id": "b"}', "invalid JSON: duplicate key job_id"),
        ('{"job_id": "a", "job\\u005fid": "a"}', "invalid JSON: duplicate key job_id"),
        ('{"job_id": null, "job_id": null}', "invalid JSON: duplicate key job_id"),
        ('{"x": 1, "job_id": "a", "x": 2}', "invalid JSON: duplicate key x"),
        (_with(PROFILE)[:-1] + ', "note": {"a": 1, "a": 2}}', "accepted"),
        (_with(PROFILE)[:-1] + ', "note": null, "other": 1}', "accepted"),
    ],
)
def test_duplicate_keys_in_a_record_are_invalid_json(
    parser: BlockParser, line: str, verdict: str
) -> None:
    assert _verdict(parser, "profiles", line) == verdict


@pytest.mark.parametrize(
    ("extra", "verdict"),
    [
        ('"note": [1, 2, ]', "accepted"),
        ('"note": {"a": 1 , }', "accepted"),
        ('"note": [nan, -inf, INFINITY, NaN]', "accepted"),
        ('"note": "\\ud83d\\ude00"', "accepted"),
        ('"note": "\\ud800"', "invalid JSON"),
        ('"note": "\\udc00x"', "invalid JSON"),
        ('"note": [,]', "invalid JSON"),
        ('"note": +inf', "invalid JSON"),
    ],
)
def test_json_that_is_not_quite_json_is_read_as_duckdb_reads_it(
    parser: BlockParser, extra: str, verdict: str
) -> None:
    assert _verdict(parser, "profiles", _with(PROFILE)[:-1] + ", " + extra + "}") == verdict


def test_a_trailing_comma_after_the_last_field_is_accepted(parser: BlockParser) -> None:
    assert _verdict(parser, "profiles", _with(PROFILE)[:-1] + ",}") == "accepted"


@pytest.mark.parametrize("value", ["nan", "-NaN", "Infinity", "-inf", "1e309", "-1e400"])
@pytest.mark.parametrize("field", ["step", "chips", "step_time_s", "model_flops"])
def test_nan_and_infinity_are_not_finite_wherever_a_number_is_due(
    parser: BlockParser, field: str, value: str
) -> None:
    line = _with(PROFILE)[:-1] + f', "{field}": {value}}}'
    line = line.replace(f'"{field}": {json.dumps(PROFILE[field])}, ', "", 1)
    assert _verdict(parser, "profiles", line) == f"out of range: {field} is not finite"


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        (b" \t\r ", "empty line"),
        (b"\t", "empty line"),
        (b"\xc2\xa0", "invalid JSON"),
        (b"\x0c", "invalid JSON"),
        (b"\xe2\x80\xa8", "invalid JSON"),
        (b"\t" + _with(PROFILE).encode(), "accepted"),
    ],
)
def test_whitespace_only_lines_are_empty_lines(
    parser: BlockParser, line: bytes, verdict: str
) -> None:
    assert _verdict(parser, "profiles", line) == verdict


@pytest.mark.parametrize(
    ("source", "line", "verdict"),
    [
        ("profiles", _with(PROFILE, job_id=""), "out of range: job_id is empty"),
        ("profiles", _with(PROFILE, flops_source=""), "accepted"),
        ("scheduler", _with(SUBMIT, owner="", topology=""), "accepted"),
        ("scheduler", _with(SUBMIT, framework=""), "unknown framework: "),
        ("runtime", _with(SPAN, kind=""), "unknown kind: "),
    ],
)
def test_only_an_empty_job_id_is_out_of_range(
    parser: BlockParser, source: str, line: str, verdict: str
) -> None:
    assert _verdict(parser, source, line) == verdict


def test_several_problems_give_the_first_field_then_relations(parser: BlockParser) -> None:
    early = "2026-11-19T00:00:00Z"
    assert _verdict(parser, "runtime", _with(SPAN, end=early, step=None)) == ("missing field: step")
    assert _verdict(parser, "runtime", _with(SPAN, end=early, attempt=-1)) == (
        "out of range: attempt must be >= 0"
    )


def test_the_adapters_writer_spells_team_and_queue_as_the_fast_path_reads_them(
    parser: BlockParser,
) -> None:
    """A JOB_SUBMIT an adapter writes (mpg.adapters.canonical) with an owner, a team and a queue
    is an ordinary line: json.dumps's compact spelling, the spec's fields in the spec's order."""
    import polars as pl

    from mpg.adapters.canonical import UTC_TIME, json_lines

    named = {"queue": "gpu", "team": "physics", "owner": "ana"}  # any column order
    frame = pl.DataFrame([{**SUBMIT, "ts": None, **named}]).with_columns(
        pl.lit("2026-11-20T00:00:00Z").str.to_datetime(time_zone="UTC").cast(UTC_TIME).alias("ts")
    )
    (line,) = json_lines("scheduler", frame).to_list()
    spelled = {**SUBMIT, "owner": "ana", "team": "physics", "queue": "gpu"}
    assert line == json.dumps(spelled, separators=(",", ":"))
    fast = parser._run("scheduler", split_lines(line.encode(), 1), ordinary=True)
    assert fast.select(["ordinary", "owner", "team", "queue"]).to_pylist() == [
        {"ordinary": True, "owner": "ana", "team": "physics", "queue": "gpu"}
    ]


def test_allocated_from_as_the_writer_spells_it_is_an_ordinary_line(parser: BlockParser) -> None:
    """`allocated_from`, the extension the kubernetes import writes (docs/trace-format.md), after
    the spec's fields: the fast path reads the writer's line whole, and a value that is not a
    string is quarantined as any optional field's."""
    import polars as pl

    from mpg.adapters.canonical import UTC_TIME, json_lines

    frame = pl.DataFrame([{**SUBMIT, "ts": None, "allocated_from": "pods", "team": "ns"}])
    frame = frame.with_columns(
        pl.lit("2026-11-20T00:00:00Z").str.to_datetime(time_zone="UTC").cast(UTC_TIME).alias("ts")
    )
    (line,) = json_lines("scheduler", frame).to_list()
    assert line == json.dumps(
        {**SUBMIT, "team": "ns", "allocated_from": "pods"}, separators=(",", ":")
    )
    fast = parser._run("scheduler", split_lines(line.encode(), 1), ordinary=True)
    assert fast.select(["ordinary", "team", "allocated_from"]).to_pylist() == [
        {"ordinary": True, "team": "ns", "allocated_from": "pods"}
    ]
    assert _verdict(parser, "scheduler", _with(SUBMIT, allocated_from=["pods"])) == (
        "wrong type: allocated_from must be a string"
    )
