"""The records of a file that kubectl or an event exporter wrote: each Kubernetes object in it,
with its line and raw text, whatever the file's shape (told by content, never by name).

    >>> [(line, value) for line, _, value, _ in records_of('{"kind": "A"}\\n{"kind": "B"}\\n')]
    [(1, {'kind': 'A'}), (2, {'kind': 'B'})]

A file is a sequence of JSON values: one document (`kubectl get -o json`: a `List` of `items`, or
one object), JSON lines (an event exporter), documents one after another (`kubectl get -w -o
json`), or a JSON array (`gcloud logging read --format=json`, whose entries carry the object as
`jsonPayload`). A value that does not parse is one record, with its problem, running to the next
line that opens a top-level object (where the next line of JSON lines, or the next document of a
watch, begins).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mpg.core.errors import TraceFileError

MAX_RAW = 65_536  # characters of a malformed value kept as its raw text (a truncated export)


def read_text(path: Path) -> str:
    """The file's text, gunzipped when it starts like gzip."""
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TraceFileError(f"{path} is not a kubectl export: it is not UTF-8 text") from None
    except (OSError, EOFError) as exc:
        raise TraceFileError(f"{path} cannot be read: {exc}") from None


def json_values(text: str) -> Iterator[tuple[int, str, Any, str | None]]:
    """(line, raw text, value, problem) for each top-level JSON value of `text`, in order."""
    decoder = json.JSONDecoder()
    pos, line, size = 0, 1, len(text)
    while True:
        start = pos
        while pos < size and text[pos] in " \t\r\n":
            pos += 1
        line += text.count("\n", start, pos)
        if pos >= size:
            return
        try:
            value, end = decoder.raw_decode(text, pos)
            yield line, text[pos:end], value, None
        except json.JSONDecodeError as exc:
            resume = text.find("\n{", pos + 1)
            end = size if resume < 0 else resume + 1
            yield line, text[pos:end].rstrip()[:MAX_RAW], None, f"malformed JSON: {exc}"
        line += text.count("\n", pos, end)
        pos = end


def records_of(text: str) -> Iterator[tuple[int, str, Any, str | None]]:
    """(line, raw, object, problem) per record: a top-level object, or an item of a `List` or of
    an array, whose `line` is then its 1-based place among the items (a pretty-printed List has
    no line per item). A Cloud Logging entry stands for its `jsonPayload`."""
    for line, raw, value, problem in json_values(text):
        if problem is not None:
            yield line, raw, None, problem
        elif isinstance(value, dict) and isinstance(value.get("items"), list):
            yield from _items(value["items"])
        elif isinstance(value, list):
            yield from _items(value)
        else:
            yield line, raw, payload(value), None


def _items(items: list[Any]) -> Iterator[tuple[int, str, Any, str | None]]:
    for place, item in enumerate(items, start=1):
        yield place, json.dumps(item), payload(item), None


def payload(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("jsonPayload"), dict):
        return value["jsonPayload"]  # a Cloud Logging entry: GKE exports events there
    return value
