"""What `mpg import` reads: the input files named on its command line, local or on object
storage (`gs://`, `s3://`), found alike and read through `mpg.storage`.

The adapters are written against `pathlib.Path`, and of an input file they use `read_bytes`,
`read_text`, `is_file`, `name`, `with_name` (a sidecar beside it), `resolve` (a stable name for
its batch) and `str()` (its name in the quarantine). `StoredFile` has exactly these, reading
through `mpg.storage`, so every adapter reads a file on object storage as it reads a local one,
and names it by its URI.

    >>> str(StoredFile("gs://fleet/logs", "a.jsonl").with_name("a.flops.json"))
    'gs://fleet/logs/a.flops.json'
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mpg.core.errors import TraceRootError
from mpg.core.locations import is_remote

if TYPE_CHECKING:
    from mpg.storage import Storage


@dataclass(frozen=True)
class StoredFile:
    """A file on object storage, with the few `pathlib.Path` methods the adapters use."""

    folder: str  # the URI of the prefix that holds it
    name: str

    def __str__(self) -> str:
        return f"{self.folder}/{self.name}"

    def storage(self) -> Storage:
        """Its folder's storage (imported here: a local import needs no storage client, and a
        mistyped local path is a one-line error as fast as Python starts)."""
        from mpg.storage import Storage

        return Storage(self.folder)

    def read_bytes(self) -> bytes:
        return self.storage().read_bytes(self.name)

    def read_text(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.read_bytes().decode(encoding, errors)

    def is_file(self) -> bool:
        return self.storage().info(self.name) is not None

    def with_name(self, name: str) -> StoredFile:
        return StoredFile(self.folder, name)

    def resolve(self) -> StoredFile:
        return self  # a URI is absolute already


InputFile = Path | StoredFile


def input_files(sources: list[str], patterns: tuple[str, ...]) -> list[InputFile]:
    """The files named, and those under the folders (or prefixes) named that match the format's
    patterns, at any depth."""
    found: list[InputFile] = []
    for src in sources:
        matches = _stored(src, patterns) if is_remote(src) else _local(Path(src), patterns)
        if matches is None:
            raise TraceRootError(f"{src} does not exist")
        if not matches:
            raise TraceRootError(f"{src} holds no files named {' or '.join(patterns)}")
        found.extend(matches)
    return list(dict.fromkeys(found))


def _local(src: Path, patterns: tuple[str, ...]) -> list[InputFile] | None:
    if src.is_file():
        return [src]
    if not src.is_dir():
        return None
    return sorted({p for pattern in patterns for p in src.rglob(pattern) if p.is_file()})


def _stored(src: str, patterns: tuple[str, ...]) -> list[InputFile] | None:
    """A file named by its URI, else the matching files under the prefix (None: neither)."""
    from mpg.storage import Storage

    uri = Storage(src).uri
    folder, _, name = uri.rpartition("/")
    names_an_object = "/" in uri.split("://", 1)[1]  # more than a bucket
    if names_an_object and Storage(folder).info(name) is not None:
        return [StoredFile(folder, name)]
    entries = Storage(uri).list()
    if not entries:
        return None
    found: list[InputFile] = []
    for entry in entries:
        where, name = posixpath.split(entry.path)
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            found.append(StoredFile(f"{uri}/{where}" if where else uri, name))
    return found
