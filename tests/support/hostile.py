"""Hypothesis strategies for hostile trace lines: records of each source's schema with every kind
of bad value per field, and lines that are not records at all.

Records are written as JSON *text*, pair by pair, so that what no JSON library writes can be
written too: NaN in any spelling, integers past 64 bits, trailing commas, repeated keys, escaped
NULs and half surrogate pairs. Values come from `tests.support.reference.model` (the oracle's
restatement of the contract), not from the pipeline's code.

    lines = st.lists(hostile_lines("runtime"), max_size=20)  # each line's bytes, no line feed
"""

from __future__ import annotations

import json
from typing import TypeVar

from hypothesis import strategies as st

from tests.support.reference.model import (
    EVENT_TYPES,
    FRAMEWORKS,
    JOB_STATES,
    KINDS_WITH_STEP,
    PEAK_FLOPS,
    SPAN_KINDS,
    WORKLOAD_CLASSES,
)

Text = st.SearchStrategy[str]
T = TypeVar("T")

# Values that are wrong for any field, as JSON text.
_NON_FINITE = ["NaN", "nan", "-NaN", "Infinity", "-Infinity", "inf", "-INF", "infinity"]
_HUGE_NUMBERS = ["1e309", "-1e309", "1e-400", "9223372036854775808", "-9223372036854775809"]
_HUGE_NUMBERS += ["1" + "0" * 400, "18446744073709551616", "9223372036854775807"]
_HOSTILE_SCALARS = [*_NON_FINITE, *_HUGE_NUMBERS, "true", "false", "null", "0", "-0", "-1", "8.0"]
_HOSTILE_SCALARS += ["8.5", "1E2", '""', '"8"', '"\\u0000"', '"\\ud800"', '"\\udc00x"']
_HOSTILE_SCALARS += ['"\\ud83d\\ude00"', '"é"', '"\\u00e9"', '"a\\"b"', "[]", "{}", "[1,]"]
_HOSTILE_SCALARS += ['{"a": 1, "a": 2}', '{"a": [1, 2,], }', "[NaN]"]


@st.composite
def _nested(draw: st.DrawFn) -> str:
    """An array or object nested up to 60 deep (kept well inside Python's recursion limit)."""
    depth = draw(st.integers(1, 60))
    opener = draw(st.sampled_from(["[", '{"k": ']))
    closer = "]" if opener == "[" else "}"
    return opener * depth + draw(st.sampled_from(["1", '"x"', "null", ""])) + closer * depth


HOSTILE_VALUES: Text = st.one_of(st.sampled_from(_HOSTILE_SCALARS), _nested())


def _usually(usual: st.SearchStrategy[T], odd: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """Draws from `usual`, and one time in eight from `odd` (a value just past a bound, say)."""
    return st.integers(0, 7).flatmap(lambda i: odd if i == 0 else usual)


@st.composite
def timestamps(draw: st.DrawFn) -> str:
    """RFC 3339 text and near misses: years 0000-9999, impossible dates, hour 24, leap seconds,
    long fractions, lower-case t and z, offsets up to +-24:59, a missing or bad offset."""
    odd_years = st.sampled_from([0, 1, 1969, 1970, 1999, 2100, 9999])
    year = draw(_usually(st.integers(2000, 2099), odd_years))
    month = draw(_usually(st.integers(1, 12), st.sampled_from([0, 13])))
    day = draw(_usually(st.integers(1, 28), st.sampled_from([0, 29, 30, 31, 32])))
    hour = draw(_usually(st.integers(0, 23), st.just(24)))
    minute = draw(_usually(st.integers(0, 59), st.just(60)))
    second = draw(_usually(st.integers(0, 59), st.just(60)))
    fraction = draw(_usually(st.just(""), st.from_regex(r"\.[0-9]{1,12}", fullmatch=True)))
    separator = draw(_usually(st.just("T"), st.sampled_from(["t", " ", "x", "T "])))
    offsets = st.builds(
        "{}{:02d}:{:02d}".format, st.sampled_from("+-"), st.integers(0, 24), st.integers(0, 59)
    )
    zone = draw(_usually(st.just("Z"), st.one_of(st.sampled_from(["z", "", "UTC"]), offsets)))
    date = f"{year:04d}-{month:02d}-{day:02d}"
    return f"{date}{separator}{hour:02d}:{minute:02d}:{second:02d}{fraction}{zone}"


def _edges(usual: Text, *edges: str) -> Text:
    """JSON text from `usual`, now and then one of `edges` (just inside or past a bound)."""
    return _usually(usual, st.sampled_from(edges))


def _names(names: list[str] | tuple[str, ...], *unknown: str) -> Text:
    return _edges(st.sampled_from(names), *unknown).map(json.dumps)


# Per kind of field: values that should pass (as JSON text), or just miss.
_VALID: dict[str, Text] = {
    "id": _names(["j", "train-1"], "", "é", "\u0000"),
    "index": _edges(
        st.one_of(st.integers(0, 99), st.integers(0, 2**63 - 1)).map(str),
        *["0", "9223372036854775807"],
    ),
    "int": st.one_of(st.integers(-99, 9999), st.integers(-(2**63), 2**63 - 1)).map(str),
    "chips": _edges(st.integers(1, 64).map(str), "1000000000", "1000000001", "0", "-8"),
    # Python's float repr (json.dumps) as exporters write it, and other spellings of numbers.
    "amount": _edges(
        st.one_of(st.just("1e15"), st.floats(0, 1e30).map(json.dumps)),
        *["0", "1e+30", "1.0000000000000002e+30", "1e31", "-1", "0.0", "-0.0", "1E+30"],
    ),
    "step_time": _edges(
        st.one_of(st.just("60.0"), st.floats(1e-9, 1e6).map(json.dumps)),
        *["1e-09", "9.99e-10", "5e-324", "0", "-1", "1e-400", "60", "1e-9"],
    ),
    "text": st.one_of(
        st.text(max_size=12).map(json.dumps),
        st.text(max_size=12).map(lambda text: json.dumps(text, ensure_ascii=False)),
    ),
    "generation": _names(list(PEAK_FLOPS), "tpu-v9", "TPU-V4"),
    "workload_class": _names(WORKLOAD_CLASSES, "eval"),
    "framework": _names(FRAMEWORKS, "mxnet"),
    "state": _names(JOB_STATES, "DONE"),
    "kind": _names(SPAN_KINDS, "warmup"),
}
ANY_TIME: Text = timestamps().map(json.dumps)


def times_on(day: str) -> Text:
    """Valid timestamps (JSON text) on `day`, and one time in eight one that is never valid: a
    fleet given these stays within the day, whatever hostile records it accepts."""
    clock = st.builds("{:02d}:{:02d}:{:02d}".format, *[st.integers(0, n) for n in (23, 59, 59)])
    never = ["0000-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59-23:59"]
    never += ["2100-01-01T00:00:00Z", f"{day}T24:00:00Z", f"{day}T12:00:00"]
    return _usually(clock.map(f"{day}T{{}}Z".format), st.sampled_from(never)).map(json.dumps)


# Each record shape: its fields, their kinds, and whether the spec requires them.
_SUBMIT = [
    ("chips_requested", "chips", True),
    ("chip_generation", "generation", True),
    ("workload_class", "workload_class", True),
    ("framework", "framework", True),
    ("priority", "int", False),
    ("owner", "text", False),
    ("team", "text", False),
    ("queue", "text", False),
    ("topology", "text", False),
    ("allocated_from", "text", False),
]
_TASK = [("task_index", "index", True)]
_TASK_FIELDS = ["task_index", "chips", "state"]  # after JOB_SUBMIT's, in the spec's order
_SCHEDULER = {
    "JOB_SUBMIT": _SUBMIT,
    "TASK_SCHEDULE": [*_TASK, ("chips", "chips", True)],
    **{t: _TASK for t in EVENT_TYPES if t.startswith("TASK_") and t != "TASK_SCHEDULE"},
    "JOB_END": [("state", "state", True)],
}
_SPAN = [
    ("job_id", "id", True),
    ("attempt", "index", True),
    ("start", "time", True),
    ("end", "time", True),
]
_PROFILE = [
    ("job_id", "id", True),
    ("ts", "time", True),
    ("step", "int", True),
    ("step_time_s", "step_time", True),
    ("model_flops", "amount", True),
    ("hbm_bytes", "amount", False),
    ("chips", "chips", True),
    ("flops_source", "text", False),
]


def _fields(source: str, draw: st.DrawFn) -> list[tuple[str, str, bool]]:
    if source == "scheduler":
        kind = draw(st.sampled_from([*EVENT_TYPES, "JOB_RESIZE"]))
        common = [("ts", "time", True), ("job_id", "id", True)]
        return [("type", f"={json.dumps(kind)}", True), *common, *_SCHEDULER.get(kind, [])]
    if source == "runtime":
        kind = draw(st.sampled_from(SPAN_KINDS))
        step = [("step", "int", kind in KINDS_WITH_STEP)]
        return [("kind", f"={json.dumps(kind)}", True), *_SPAN, *step]
    return _PROFILE


def _spelled(name: str) -> Text:
    """A key as JSON text, now and then with its first letter written as a \\u escape."""
    escaped = f'"\\u{ord(name[0]):04x}{name[1:]}"'
    return _edges(st.just(json.dumps(name)), escaped)


def _pairs(
    draw: st.DrawFn, source: str, times: Text, hostile: int, odd: bool = True
) -> list[tuple[str, str]]:
    """A record's (key, value) pairs as JSON text, in the order `_fields` lists them: mostly
    valid values, each field hostile, missing or null `hostile` times in a hundred; if `odd`,
    now and then a key spelled with an escape, an extra field at the end and a repeated key
    after it."""
    pairs: list[tuple[str, str]] = []
    for name, kind, required in _fields(source, draw):
        roll = draw(st.integers(0, 99))  # percent
        if roll < hostile / 3 or (not required and roll >= 60):
            continue  # missing
        if roll < hostile / 2:
            value = "null"
        elif roll < hostile:
            value = draw(HOSTILE_VALUES)
        elif kind.startswith("="):
            value = kind[1:]
        else:
            value = draw(times if kind == "time" else _VALID[kind])
        pairs.append((draw(_spelled(name)) if odd else json.dumps(name), value))
    if not odd:
        return pairs
    if draw(st.integers(0, 9)) == 0:
        pairs.append((json.dumps(draw(st.text(max_size=6))), draw(HOSTILE_VALUES)))
    if pairs and draw(st.integers(0, 19)) == 0:
        key, _ = draw(st.sampled_from(pairs))
        pairs.append((key, draw(HOSTILE_VALUES)))
    return pairs


@st.composite
def records(draw: st.DrawFn, source: str, times: Text = ANY_TIME, hostile: int = 12) -> str:
    """One record of `source` as JSON text: mostly valid values, each field hostile, missing or
    null `hostile` times in a hundred, perhaps an extra field, a repeated key, a trailing comma,
    odd whitespace. `times` draws the timestamps (JSON text) of the time fields."""
    pairs = draw(st.permutations(_pairs(draw, source, times, hostile)))
    space = draw(st.sampled_from(["", " ", "\t", " \r "]))
    body = f",{space}".join(f"{key}:{space}{value}" for key, value in pairs)
    trailing = "," if pairs and draw(st.integers(0, 19)) == 0 else ""
    return f"{space}{{{space}{body}{trailing}{space}}}{space}"


# The order the spec's tables list each source's fields in, which is the order an exporter that
# builds a dict from those tables and calls json.dumps writes them (and the simulator does).
SPEC_ORDER = {
    "scheduler": ["type", "ts", "job_id", *[name for name, _, _ in _SUBMIT], *_TASK_FIELDS],
    "runtime": ["job_id", "attempt", "kind", "start", "end", "step"],
    "profiles": [name for name, _, _ in _PROFILE],
}


@st.composite
def canonical_records(
    draw: st.DrawFn, source: str, times: Text = ANY_TIME, hostile: int = 12, odd: bool = True
) -> str:
    """One record of `source` laid out as json.dumps writes it, with its default separators or
    compact ones: the spec's fields in the spec's order, no other whitespace. Values, missing and
    null fields, extra and repeated keys as in `records`, so the same layout carries every kind
    of bad value (the parser's fast path must recognise ordinary records in this layout and let
    nothing else through). Without `odd`, no key escaped, extra or repeated, no trailing comma:
    with a low `hostile`, mostly records the fast path takes."""
    order = {f'"{name}"': i for i, name in enumerate(SPEC_ORDER[source])}
    pairs = _pairs(draw, source, times, hostile, odd)
    pairs.sort(key=lambda pair: order.get(pair[0], len(order)))  # stable: extras stay last
    comma, colon = draw(st.sampled_from([(", ", ": "), (",", ":")]))
    trailing = "," if odd and pairs and draw(st.integers(0, 19)) == 0 else ""
    return "{" + comma.join(f"{key}{colon}{value}" for key, value in pairs) + trailing + "}"


_NOT_RECORDS = [b"", b" ", b"\t", b"\r", b" \t ", b"\x0c", b"\xc2\xa0", b"\xe2\x80\xa8"]
_NOT_RECORDS += [b"[1, 2]", b'"x"', b"5", b"null", b"NaN", b"{", b"}", b"{}", b"\xef\xbb\xbf{}"]
_NOT_RECORDS += [b'{"a": 1} {"b": 2}', b'{"a": 1}}', b"{'a': 1}", b'{"a": 1} // note', b"\x00"]
_INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"]


@st.composite
def _damaged(draw: st.DrawFn, record: bytes) -> bytes:
    """A record cut short, or with a NUL, an invalid UTF-8 sequence or a CR put in somewhere."""
    at = draw(st.integers(0, len(record)))
    how = draw(st.sampled_from(["cut", "nul", "utf8", "cr"]))
    if how == "cut":
        return record[:at]
    insert = {"nul": b"\x00", "cr": b"\r"}.get(how) or draw(st.sampled_from(_INVALID_UTF8))
    return record[:at] + insert + record[at:]


def hostile_lines(source: str, times: Text = ANY_TIME) -> st.SearchStrategy[bytes]:
    """One line's bytes (no line feed): a record, a damaged record, or something else entirely."""
    encoded = records(source, times).map(str.encode)
    return st.one_of(
        encoded,
        encoded,
        encoded.flatmap(_damaged),
        st.sampled_from(_NOT_RECORDS),
        st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")),
    )


def canonical_lines(
    source: str, times: Text = ANY_TIME, hostile: int = 12, odd: bool = True
) -> st.SearchStrategy[bytes]:
    """One line's bytes (no line feed): a record in json.dumps's layout (`canonical_records`),
    now and then damaged."""
    encoded = canonical_records(source, times, hostile, odd).map(str.encode)
    return st.one_of(encoded, encoded, encoded, encoded.flatmap(_damaged))
