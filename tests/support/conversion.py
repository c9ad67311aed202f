"""An import format's conversion, without the CLI: `mpg import FORMAT` up to the adapter's
`convert(paths, args)`, its answer read as the canonical records `mpg import` would write.

The options are parsed by the CLI's own parser (so every default is the user's), the files are
named one by one (no folder is searched) and nothing is written: a unit test of an adapter gives
a few hand-made records and checks each canonical record, quarantine row and count that comes
out.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mpg.adapters import ADAPTERS
from mpg.adapters.canonical import Conversion, json_lines
from mpg.cli.command import parser


def convert(fmt: str, paths: Sequence[Path], *options: str, root: Path | None = None) -> Conversion:
    """The adapter of `fmt` on `paths`, with `options` as on the command line. `root` is the
    trace root `--out` names: only kubernetes reads it (what earlier imports kept) and writes to
    it (what this one keeps); the others write nothing there, so it may be left out."""
    argv = ["import", fmt, *map(str, paths), "--out", str(root or "unused"), *options]
    args = parser(argv).parse_args(argv)
    return importlib.import_module(ADAPTERS[fmt].module).convert(list(paths), args)


def records(conversion: Conversion, source: str) -> list[dict[str, Any]]:
    """Every canonical record of `source`, as the JSON lines `mpg import` writes (the spec's field
    order, times in RFC 3339 UTC, null fields left out), over the batches in order."""
    return [
        json.loads(line)
        for batch in conversion.batches
        if source in batch.frames()
        for line in json_lines(source, batch.frames()[source])
    ]


def unordered(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in a fixed order (where a file's order carries no meaning), for comparing lists."""
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


def quarantined(conversion: Conversion) -> list[tuple[str, int, str]]:
    """(input file's name, line or place, reason) of each quarantine row, in that order."""
    rows = conversion.quarantine.sort("file", "line").to_dicts()
    return [(Path(r["file"]).name, r["line"], r["reason"]) for r in rows]
