"""Writing a conversion into a trace root, and what `mpg import` says it did.

Each batch becomes one file per source, `ROOT/<source>/<format>-<name>.jsonl`, written whole or
not at all (`mpg.storage`: a temporary name renamed locally, one upload on `gs://` or `s3://`),
so `mpg run` never reads half a file and a killed import leaves the root as it was. The name is
the batch's (a job, a source file) made safe for a path, plus a digest of it: importing the same
job or file again replaces its records rather than adding a second copy (or removes them, where
the batch now has none of a source), and `mpg run`'s incremental planning sees a changed file.
Records an adapter could not use go to `ROOT/quarantine/<format>-<name>-<digest>.jsonl` with
their file, line, reason and raw text, which `mpg run` counts and publishes as source `import`
(`mpg.adapters.quarantine` says how).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mpg.adapters.canonical import Conversion, json_lines
from mpg.adapters.quarantine import IMPORT_FIELDS, QUARANTINE_FOLDER
from mpg.core.locations import is_remote
from mpg.storage import Storage


@dataclass(frozen=True)
class ImportSummary:
    format: str
    read: int
    converted: int
    quarantined: int
    ignored: dict[str, int]  # records about no job, by what they are
    records: dict[str, int]  # canonical records written, per source
    files: dict[str, int]  # files written, per source
    quarantine_file: str | None  # where, as `under` names it
    reasons: dict[str, int]


def file_name(fmt: str, name: str) -> str:
    """`<format>-<name, safe for a path>-<digest of name>`: readable, and distinct per name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60]
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    return f"{fmt}-{safe}-{digest}" if safe else f"{fmt}-{digest}"


def under(root: str, path: str) -> str:
    """`path` under the trace root as the user named it (a local one as pathlib joins it)."""
    return f"{root.rstrip('/')}/{path}" if is_remote(root) else str(Path(root) / path)


def _write_lines(root: Storage, path: str, lines: pl.Series) -> None:
    """Writes `lines` to `path` unless it holds them already: an import that derives every job
    again (kubernetes) leaves the files of unchanged jobs as they were, so that an incremental
    `mpg run` does not redo their buckets."""
    text = lines.str.join("\n").item() + "\n"
    try:
        if root.read_bytes(path) == text.encode("utf-8"):
            return
    except FileNotFoundError:
        pass
    root.write_text(path, text)


def write_conversion(root: str, fmt: str, conversion: Conversion) -> ImportSummary:
    """Write the conversion's batches and quarantine under the trace root `root`."""
    quarantined = conversion.quarantined_here
    ignored = sum(conversion.ignored.values())
    if conversion.read != conversion.converted + quarantined + ignored:
        raise AssertionError(
            f"{fmt}: read {conversion.read} != converted {conversion.converted} + "
            f"quarantined {quarantined} + ignored {ignored}"
        )
    store = Storage(root)
    records: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for batch in conversion.batches:
        frames = batch.frames()
        for source in ("scheduler", "runtime", "profiles"):
            path = f"{source}/{file_name(fmt, batch.name)}.jsonl"
            if source not in frames:
                # The batch has no records of this source now: an earlier import's are stale.
                store.delete([path])
                continue
            _write_lines(store, path, json_lines(source, frames[source]))
            records[source] += frames[source].height
            files[source] += 1
    quarantine_file = None
    rows = conversion.quarantine.sort("file", "line")
    names = conversion.quarantine_name or "\n".join(rows.get_column("file").unique().sort())
    path = f"{QUARANTINE_FOLDER}/{file_name(fmt, names)}.jsonl"
    if rows.height:
        fields = [pl.lit(fmt).alias(f) if f == "format" else pl.col(f) for f in IMPORT_FIELDS]
        lines = rows.select(pl.struct(fields).struct.json_encode()).to_series()
        _write_lines(store, path, lines)
        quarantine_file = under(root, path)
    elif conversion.quarantine_name is not None:
        store.delete([path])
    reasons = Counter(conversion.quarantine.get_column("reason").to_list())
    return ImportSummary(
        format=fmt,
        read=conversion.read,
        converted=conversion.converted,
        quarantined=quarantined,
        ignored=dict(sorted(conversion.ignored.items(), key=lambda kv: (-kv[1], kv[0]))),
        records=dict(records),
        files=dict(files),
        quarantine_file=quarantine_file,
        reasons=dict(reasons.most_common()),
    )


def format_summary(summary: ImportSummary, root: str) -> str:
    ignored = sum(summary.ignored.values())
    lines = [
        f"mpg import {summary.format}: {summary.read} records read = {summary.converted} "
        f"converted + {summary.quarantined} quarantined"
        + (f" + {ignored} ignored" if summary.ignored else ""),
    ]
    for source in ("scheduler", "runtime", "profiles"):
        if source in summary.records:
            lines.append(
                f"  {source:<10} {summary.records[source]:>9} records in "
                f"{summary.files[source]} files -> {under(root, source)}"
            )
    if summary.quarantine_file is not None:
        lines.append(f"  quarantined -> {summary.quarantine_file}")
        lines.extend(f"    {count:>7}  {reason}" for reason, count in summary.reasons.items())
    if summary.ignored:
        lines.append("  ignored, about no job in the input:")
        lines.extend(f"    {count:>7}  {what}" for what, count in summary.ignored.items())
    return "\n".join(lines)
