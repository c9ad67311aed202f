"""The reference's reading: files, lines, one record's validation, duplicates, jobs."""

from __future__ import annotations

import datetime
import json
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.reference.model import (
    EARLIEST_US,
    EPOCH_ORDINAL,
    EVENT_TYPES,
    EXCERPT_BYTES,
    FRAMEWORKS,
    INT64_MAX,
    INT64_MIN,
    JOB_STATES,
    KINDS_WITH_STEP,
    LATEST_US,
    MAX_AMOUNT,
    MAX_CHIPS,
    MAX_LINE_BYTES,
    MIN_STEP_TIME_S,
    PEAK_FLOPS,
    SOURCES,
    SPAN_KINDS,
    US,
    WORKLOAD_CLASSES,
    Counts,
    Rejected,
)

# ---------------------------------------------------------------------------------------------
# Reading files


def trace_files(root: Path, source: str) -> list[Path]:
    """Every *.jsonl / *.jsonl.gz file under root/source, at any depth."""
    folder = root / source
    if not folder.is_dir():
        return []
    found = [
        p
        for p in folder.rglob("*")
        if p.is_file() and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz"))
    ]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def gunzip(raw: bytes) -> tuple[bytes, bool]:
    """The decompressed bytes of a gzip file (all its members), and whether it was damaged.
    For a damaged file, the bytes are all that could be decompressed before the damage.
    Reading: where the damage shows only at the end (a bad CRC), everything before it counts."""
    out = bytearray()
    rest = raw
    while rest:
        member = zlib.decompressobj(wbits=31)
        try:
            out += member.decompress(rest)
        except zlib.error:
            # Decompress again a byte at a time, to keep everything before the damage.
            member = zlib.decompressobj(wbits=31)
            for i in range(len(rest)):
                try:
                    out += member.decompress(rest[i : i + 1])
                except zlib.error:
                    break
            return bytes(out), True
        if not member.eof:
            return bytes(out), True  # truncated
        rest = member.unused_data
    return bytes(out), False


def read_lines(path: Path) -> tuple[list[bytes], bytes | None]:
    """A file's lines (without line breaks), and the unreadable rest of a damaged .gz (None when
    the file read fine). The final line break does not start an empty record."""
    raw = path.read_bytes()
    broken = False
    if path.name.endswith(".gz"):
        raw, broken = gunzip(raw)
    pieces = raw.split(b"\n")
    tail = pieces.pop()  # what follows the last line break: b"" when the file ends with one
    if broken:
        return [p.removesuffix(b"\r") for p in pieces], tail
    if tail:
        pieces.append(tail)
    return [p.removesuffix(b"\r") for p in pieces], None


# ---------------------------------------------------------------------------------------------
# Validating one record


class BadRecordError(Exception):
    """A record that goes to the quarantine; the message is the reason."""


_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def parse_time(text: str) -> int | None:
    """Strict RFC 3339 to integer microseconds since the epoch (fraction truncated), else None."""
    m = _TIME.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, zone = m.group(7), m.group(8)
    # The Gregorian calendar repeats every 400 years (146,097 days): shifted into 2000-2399, any
    # year 0000-9999 can be checked and counted by datetime.date (which starts at year 1).
    cycles, year_in_cycle = divmod(year, 400)
    try:
        ordinal = datetime.date(2000 + year_in_cycle, month, day).toordinal()
    except ValueError:
        return None
    ordinal += (cycles - 5) * 146_097
    if hour > 23 or minute > 59 or second > 59:
        return None
    offset_s = 0
    if zone not in ("Z", "z"):
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        offset_s = (zh * 3600 + zm * 60) * (1 if zone[0] == "+" else -1)
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    seconds = (ordinal - EPOCH_ORDINAL) * 86_400 + hour * 3600 + minute * 60 + second - offset_s
    return seconds * US + micros


def _value(obj: dict[str, Any], name: str, required: bool) -> Any:
    value = obj.get(name)  # null is the same as a missing field
    if value is None and required:
        raise BadRecordError(f"missing field: {name}")
    return value


def _string(obj: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = _value(obj, name, required)
    if value is not None and not isinstance(value, str):
        raise BadRecordError(f"wrong type: {name} must be a string")
    return value


def _job_id(obj: dict[str, Any]) -> str:
    value = _string(obj, "job_id")
    if value == "":
        raise BadRecordError("out of range: job_id is empty")
    return value


def _choice(obj: dict[str, Any], name: str, allowed: Any) -> str:
    value = _string(obj, name)
    if value not in allowed:
        raise BadRecordError(f"unknown {name}: {value}")
    return value


def _integer(
    obj: dict[str, Any],
    name: str,
    minimum: int | None,
    maximum: int | None = None,
    required: bool = True,
) -> Any:
    value = _value(obj, name, required)
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        raise BadRecordError(f"out of range: {name} is not finite")
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRecordError(f"wrong type: {name} must be an integer")
    if not INT64_MIN <= value <= INT64_MAX:
        raise BadRecordError(f"out of range: {name} does not fit in 64 bits")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise BadRecordError(f"out of range: {name} is {value}, outside {minimum}..{maximum}")
    return value


def _number(
    obj: dict[str, Any],
    name: str,
    minimum: float,
    maximum: float | None = None,
    required: bool = True,
) -> Any:
    """A JSON number (integer or not) from minimum to maximum, both included."""
    value = _value(obj, name, required)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecordError(f"wrong type: {name} must be a number")
    try:
        number = float(value)
    except OverflowError:
        raise BadRecordError(f"out of range: {name} is not finite") from None
    if not math.isfinite(number):
        raise BadRecordError(f"out of range: {name} is not finite")
    if number < minimum or (maximum is not None and number > maximum):
        raise BadRecordError(f"out of range: {name} is {number}, outside {minimum}..{maximum}")
    return number


def _time(obj: dict[str, Any], name: str) -> int:
    value = _value(obj, name, True)
    if not isinstance(value, str):
        raise BadRecordError(f"wrong type: {name} must be an RFC 3339 string")
    micros = parse_time(value)
    if micros is None:
        raise BadRecordError(f"unparseable time: {name}")
    if not EARLIEST_US <= micros < LATEST_US:
        raise BadRecordError(f"out of range: {name} is outside 2000-01-01..2099-12-31")
    return micros


def scheduler_fields(obj: dict[str, Any]) -> dict[str, Any]:
    kind = _string(obj, "type")
    if kind not in EVENT_TYPES:
        raise BadRecordError(f"unknown type: {kind}")
    fields = {"type": kind, "ts": _time(obj, "ts"), "job_id": _job_id(obj)}
    if kind == "JOB_SUBMIT":
        fields["chips_requested"] = _integer(obj, "chips_requested", 1, MAX_CHIPS)
        fields["chip_generation"] = _choice(obj, "chip_generation", PEAK_FLOPS)
        fields["workload_class"] = _choice(obj, "workload_class", WORKLOAD_CLASSES)
        fields["framework"] = _choice(obj, "framework", FRAMEWORKS)
        fields["priority"] = _integer(obj, "priority", None, required=False)
        fields["owner"] = _string(obj, "owner", required=False)
        fields["team"] = _string(obj, "team", required=False)
        fields["queue"] = _string(obj, "queue", required=False)
        fields["topology"] = _string(obj, "topology", required=False)
        fields["allocated_from"] = _string(obj, "allocated_from", required=False)
    elif kind == "JOB_END":
        fields["state"] = _choice(obj, "state", JOB_STATES)
    else:
        fields["task_index"] = _integer(obj, "task_index", 0)
        if kind == "TASK_SCHEDULE":
            fields["chips"] = _integer(obj, "chips", 1, MAX_CHIPS)
    return fields


def runtime_fields(obj: dict[str, Any]) -> dict[str, Any]:
    fields = {
        "job_id": _job_id(obj),
        "attempt": _integer(obj, "attempt", 0),
        "kind": _choice(obj, "kind", SPAN_KINDS),
        "start": _time(obj, "start"),
        "end": _time(obj, "end"),
    }
    if fields["kind"] in KINDS_WITH_STEP:
        fields["step"] = _integer(obj, "step", None)
    if fields["end"] < fields["start"]:
        raise BadRecordError("out of range: end < start")
    return fields


def profile_fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "job_id": _job_id(obj),
        "ts": _time(obj, "ts"),
        "step": _integer(obj, "step", None),
        "step_time_s": _number(obj, "step_time_s", minimum=MIN_STEP_TIME_S),
        "model_flops": _number(obj, "model_flops", minimum=0, maximum=MAX_AMOUNT),
        "hbm_bytes": _number(obj, "hbm_bytes", minimum=0, maximum=MAX_AMOUNT, required=False),
        "chips": _integer(obj, "chips", 1, MAX_CHIPS),
        "flops_source": _string(obj, "flops_source", required=False),
    }


FIELDS = {"scheduler": scheduler_fields, "runtime": runtime_fields, "profiles": profile_fields}


def parse_line(source: str, raw: bytes) -> dict[str, Any]:
    """The record's spec-defined fields (absent optional ones left out), else BadRecordError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRecordError("invalid UTF-8") from None
    if not text.strip(JSON_SPACE):
        raise BadRecordError("empty line")
    obj = load_json(text)
    if not isinstance(obj, JSONObject):
        raise BadRecordError("not a JSON object")
    if obj.repeated is not None:
        raise BadRecordError(f"invalid JSON: duplicate key {obj.repeated}")
    fields = FIELDS[source](obj)
    return {name: value for name, value in fields.items() if value is not None}


# ---------------------------------------------------------------------------------------------
# JSON, as docs/decisions.md reads it

JSON_SPACE = " \t\r"  # JSON's whitespace, less the line feed that ends a line

# A line as tokens: whitespace, a string (perhaps unterminated), a structural character, or a
# bare word (number or literal). Every character belongs to exactly one token.
_TOKEN = re.compile(r'[ \t\r]+|"(?:[^"\\]|\\.)*"?|[\[\]{}:,]|[^ \t\r\[\]{}:,"]+', re.DOTALL)
_NON_FINITE = re.compile(r"(-?)(nan|inf|infinity)", re.IGNORECASE)


class JSONObject(dict):
    """A JSON object that remembers the first key it was given a second time."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        self.repeated: str | None = None
        for key, _ in pairs:
            if key in seen:
                self.repeated = key
                break
            seen.add(key)


def load_json(text: str) -> Any:
    """`text` as JSON with the extensions the decisions accept, else BadRecordError.

    Accepted beyond JSON: NaN and Infinity in any case, with an optional '-' (`nan`, `-inf`,
    `INFINITY`; read as not finite), and a comma after the last value of an array or object.
    Rejected although Python's json reads it: a string escape that is half of a surrogate pair
    (no UTF-8 text can hold it). Reading: nesting deeper than Python's recursion limit (about
    a thousand levels) is beyond this reference; it raises RecursionError.
    """
    try:
        value = json.loads(
            _as_standard_json(text), parse_constant=float, object_pairs_hook=JSONObject
        )
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # UnicodeEncodeError: a surrogate
    except ValueError:  # JSONDecodeError and UnicodeEncodeError are both ValueErrors
        raise BadRecordError("invalid JSON") from None
    return value


def _as_standard_json(text: str) -> str:
    """`text` with the accepted extensions rewritten as Python's json reads them."""
    tokens = _TOKEN.findall(text)
    solid = [i for i, token in enumerate(tokens) if token[0] not in JSON_SPACE]
    out = list(tokens)
    for before, comma, after in zip(solid, solid[1:], solid[2:], strict=False):
        closes = tokens[after] in ("]", "}")
        follows_value = tokens[before] not in ("[", "{", ",", ":")
        if tokens[comma] == "," and closes and follows_value:
            out[comma] = ""
    for i in solid:
        word = _NON_FINITE.fullmatch(tokens[i])
        if word is not None:
            negative, name = word[1] == "-", word[2].lower()
            out[i] = "NaN" if name == "nan" else "-Infinity" if negative else "Infinity"
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# The run's records: read, de-duplicated, checked against jobs


@dataclass
class Record:
    source: str
    file: str
    line: int
    raw: str
    fields: dict[str, Any]

    def key(self) -> tuple[Any, ...]:
        """Equal for exact duplicates: same source and equal parsed fields."""
        return (self.source, tuple(sorted(self.fields.items())))


@dataclass
class Job:
    submit: Record
    end: Record | None = None
    events: list[Record] = field(default_factory=list)  # task events
    spans: list[Record] = field(default_factory=list)
    profiles: list[Record] = field(default_factory=list)


def read_records(root: Path) -> tuple[list[Record], list[Rejected], dict[str, Counts]]:
    """Every valid record (duplicates included), the malformed ones, and lines read."""
    valid: list[Record] = []
    rejected: list[Rejected] = []
    counts = {source: Counts() for source in SOURCES}
    for source in SOURCES:
        for path in trace_files(root, source):
            rel = path.relative_to(root).as_posix()
            lines, rest = read_lines(path)
            for number, raw in enumerate(lines, start=1):
                counts[source].read += 1
                if len(raw) > MAX_LINE_BYTES:
                    excerpt = raw[:EXCERPT_BYTES].decode("utf-8", errors="replace")
                    rejected.append(Rejected(source, rel, number, "line too long", excerpt))
                    continue
                text = raw.decode("utf-8", errors="replace")
                try:
                    fields = parse_line(source, raw)
                except BadRecordError as bad:
                    rejected.append(Rejected(source, rel, number, str(bad), text))
                else:
                    valid.append(Record(source, rel, number, text, fields))
            if rest is not None:
                counts[source].read += 1
                excerpt = rest[:EXCERPT_BYTES].decode("utf-8", errors="replace")
                reason = "unreadable file: damaged gzip"
                rejected.append(Rejected(source, rel, len(lines) + 1, reason, excerpt))
    return valid, rejected, counts
