"""What `mpg import` could not convert, as `mpg run` counts it: the records of a trace root's
`quarantine/` folder, as rows of the run's `quarantine` table and a `record_counts` row.

`mpg import` writes each record it cannot use to `ROOT/quarantine/<format>-<name>-<digest>.jsonl`
(`mpg.adapters.write`), one JSON object per line, `IMPORT_FIELDS`:

    {"format": "ml-goodput", "file": "logs/run.jsonl", "line": 12, "reason": "...", "raw": "..."}

where `file` and `line` say where in the import's input the record was (`file` as named to the
import), and `raw` is its text. A run reads every such file of its trace root, whole, each time:
they are small, and re-importing replaces a file rather than adding one.

What the run publishes, with `source` = `import` (docs/adapters/README.md, docs/decisions.md):
- one `quarantine` row per distinct record: `file` is the quarantine file relative to the trace
  root and `line` its line there, as for every source (so `(source, file, line)` stays a key, and
  the line can be opened); `reason` is the import's reason; `raw` is the line, which holds the
  format, the input file and line, and the input's own text;
- one `record_counts` row: `records_read` counts the lines of the folder's files (records an
  import read and could not convert; those it converted are counted under their canonical
  source when the run reads them); none is `accepted`; an exact duplicate of an earlier record
  (the same record of the same input, quarantined by two imports) counts once, the others as
  `duplicates`; so `records_read = accepted + duplicates + quarantined` holds as for the others.
- A line that is not such a record (someone edited the file) is quarantined too, with a reason
  that says so: nothing read is dropped without a row.

    >>> found = import_quarantine([("quarantine/a.jsonl", b'{"format": "philly", "file": "j.json",'
    ...     b' "line": 3, "reason": "no attempts", "raw": "{}"}\\n{broken\\n')])
    >>> [(r["file"], r["line"], r["reason"]) for r in found.rows.to_pylist()]
    [('quarantine/a.jsonl', 1, 'no attempts'), ('quarantine/a.jsonl', 2, 'not an import quarantine record: invalid JSON')]
    >>> found.counts.to_pylist()
    [{'source': 'import', 'records_read': 2, 'accepted': 0, 'duplicates': 0, 'quarantined': 2}]
"""  # noqa: E501

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from mpg.schemas import QUARANTINE, RECORD_COUNTS

QUARANTINE_FOLDER = "quarantine"
IMPORT_SOURCE = "import"
# A quarantined import record's fields and their JSON types, in the order they are written.
IMPORT_FIELDS: dict[str, type] = {
    "format": str,
    "file": str,
    "line": int,
    "reason": str,
    "raw": str,
}
NOT_A_RECORD = "not an import quarantine record"


@dataclass(frozen=True)
class ImportQuarantine:
    rows: pa.Table  # schema QUARANTINE, ordered by (file, line)
    counts: pa.Table  # schema RECORD_COUNTS: one row for source `import`, none without files


def _read(text: str) -> tuple[str, tuple[Any, ...] | None]:
    """A line's reason and, for a quarantined import record, its values (in IMPORT_FIELDS'
    order, which is what makes two records exact duplicates); for another line, why it is not
    one, and None."""
    if not text.strip():
        return f"{NOT_A_RECORD}: empty line", None
    try:
        record = json.loads(text)
    except ValueError:
        return f"{NOT_A_RECORD}: invalid JSON", None
    if not isinstance(record, dict):
        return f"{NOT_A_RECORD}: not a JSON object", None
    for name, kind in IMPORT_FIELDS.items():
        value = record.get(name)
        if value is None:
            return f"{NOT_A_RECORD}: missing field {name}", None
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{NOT_A_RECORD}: wrong type: {name}", None
    return record["reason"], tuple(record[name] for name in IMPORT_FIELDS)


def import_quarantine(files: Iterable[tuple[str, bytes]]) -> ImportQuarantine:
    """The run's rows and counts for the quarantine files given as (name relative to the trace
    root, contents). Pure: the caller lists and reads the files (`read_import_quarantine`)."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    read = duplicates = 0
    any_file = False
    for name, data in sorted(files):
        any_file = True
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines[-1] == "":  # the final line break does not start a record
            lines.pop()
        for number, line in enumerate((line.removesuffix("\r") for line in lines), 1):
            read += 1
            reason, record = _read(line)
            if record is not None and record in seen:
                duplicates += 1
                continue
            if record is not None:
                seen.add(record)
            rows.append(
                {
                    "source": IMPORT_SOURCE,
                    "file": name,
                    "line": number,
                    "reason": reason,
                    "raw": line,
                }
            )
    counts = [
        {
            "source": IMPORT_SOURCE,
            "records_read": read,
            "accepted": 0,
            "duplicates": duplicates,
            "quarantined": len(rows),
        }
    ]
    return ImportQuarantine(
        rows=pa.Table.from_pylist(rows, schema=QUARANTINE),
        counts=pa.Table.from_pylist(counts if any_file else [], schema=RECORD_COUNTS),
    )


def read_import_quarantine(root: str | Path) -> ImportQuarantine:
    """`import_quarantine` of a trace root's `quarantine/*.jsonl` (at any depth), on any storage
    (a local folder, gs://, s3://)."""
    from mpg.storage import Storage

    store = Storage(str(root))
    entries = [e for e in store.list(QUARANTINE_FOLDER) if e.path.endswith(".jsonl")]
    return import_quarantine((e.path, store.read_bytes(e.path)) for e in entries)
