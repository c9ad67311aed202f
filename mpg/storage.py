"""One storage layer for every path mpg reads or writes: local folders, `gs://` and `s3://`.

    >>> store = Storage("out")                     # or "gs://bucket/fleet", "s3://bucket/fleet"
    >>> store.write_text("hello.txt", "hi")        # paths are strings relative to the root
    >>> store.read_text("hello.txt")
    'hi'

Paths stay strings (URIs), never `pathlib.Path`: a worker on Dataflow sees no folder of the
launcher's. Data moves through `pyarrow.fs` (local, GCS and S3 clients in C++, in the pyarrow wheel
we already pin; Parquet and Arrow streams read and write through it directly, with ranged reads).
pyarrow's filesystems have no conditional write, so the one write that needs a precondition (the
snapshot pointer, `write_if`) goes through each service's own client: an exclusive lock and a
content check locally, `if_generation_match` on GCS (google-cloud-storage), `If-Match` /
`If-None-Match` on S3 (boto3). docs/decisions.md says why not Beam's FileSystems or fsspec.

Emulators and private endpoints come from the environment, as the official clients read them:
`STORAGE_EMULATOR_HOST` (GCS, anonymous) and `AWS_ENDPOINT_URL` (S3). Worker processes inherit
the environment, so they reach the same endpoint as the launcher.

Every whole-object write is atomic: a reader sees the old object or the new one. Object stores
give that for a single PUT; locally `write_*` writes a temporary name beside the target and renames
it into place.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from mpg.errors import StoreError

SCHEMES = ("gs", "s3")


class PreconditionFailedError(StoreError):
    """A conditional write found the object changed since it was read (another writer won)."""


@dataclass(frozen=True)
class Entry:
    """A file under a listed prefix: its path relative to the storage root, size and version."""

    path: str
    size: int
    mtime_ns: int


def is_remote(uri: str) -> bool:
    return urlparse(uri).scheme in SCHEMES


@functools.cache
def _filesystem(scheme: str) -> pafs.FileSystem:
    """One filesystem per scheme and process; emulator endpoints come from the environment."""
    if scheme == "gs":
        host = os.environ.get("STORAGE_EMULATOR_HOST")
        if host:
            parsed = urlparse(host if "://" in host else f"http://{host}")
            return pafs.GcsFileSystem(
                anonymous=True, scheme=parsed.scheme, endpoint_override=parsed.netloc
            )
        return pafs.GcsFileSystem()
    if scheme == "s3":
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint:
            parsed = urlparse(endpoint)
            return pafs.S3FileSystem(
                scheme=parsed.scheme,
                endpoint_override=parsed.netloc,
                region=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
            )
        return pafs.S3FileSystem()
    return pafs.LocalFileSystem()


class Storage:
    """A root (local folder or object-store prefix) and every operation mpg does under it.

    Picklable as its URI alone: each process builds its own client on first use.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        root = os.fspath(root)
        parsed = urlparse(root)
        if parsed.scheme in SCHEMES:
            if not parsed.netloc:
                raise StoreError(f"{root}: no bucket named")
            self.scheme = parsed.scheme
            self._base = f"{parsed.netloc}{parsed.path}".rstrip("/")
            self.uri = f"{self.scheme}://{self._base}"
        elif parsed.scheme in ("", "file"):
            self.scheme = "file"
            local = parsed.path if parsed.scheme == "file" else root
            self._base = str(Path(local).absolute())
            self.uri = self._base
        else:
            raise StoreError(f"{root}: unsupported scheme {parsed.scheme}:// (local, gs://, s3://)")

    def __repr__(self) -> str:
        return f"Storage({self.uri!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Storage) and other.uri == self.uri

    def __hash__(self) -> int:
        return hash(self.uri)

    def __reduce__(self) -> tuple:
        return (Storage, (self.uri,))

    @property
    def fs(self) -> pafs.FileSystem:
        return _filesystem(self.scheme)

    @property
    def remote(self) -> bool:
        return self.scheme in SCHEMES

    def full(self, path: str = "") -> str:
        """The filesystem path of `path` under the root (what `self.fs` takes)."""
        return posixpath.join(self._base, path) if path else self._base

    def child(self, path: str) -> Storage:
        """The storage rooted at `path` under this root."""
        return Storage(f"{self.uri}/{path}" if self.remote else str(Path(self.uri) / path))

    def uri_of(self, path: str) -> str:
        """A full URI for messages and for other tools (pyiceberg, BigQuery loads)."""
        return f"{self.scheme}://{self.full(path)}" if self.remote else self.full(path)

    # -- reading ------------------------------------------------------------------------------

    def info(self, path: str = "") -> Entry | None:
        """Size and modification time of a file; None if there is none."""
        info = self.fs.get_file_info(self.full(path))
        if info.type != pafs.FileType.File:
            return None
        return Entry(path, info.size or 0, _mtime_ns(info))

    def exists(self, path: str = "") -> bool:
        return self.fs.get_file_info(self.full(path)).type != pafs.FileType.NotFound

    def is_dir(self, path: str = "") -> bool:
        return self.fs.get_file_info(self.full(path)).type == pafs.FileType.Directory

    def list(self, prefix: str = "") -> list[Entry]:
        """Every file under `prefix`, at any depth, sorted by path (relative to the root)."""
        selector = pafs.FileSelector(self.full(prefix), recursive=True, allow_not_found=True)
        base = self.full() + "/"
        entries = [
            Entry(i.path.removeprefix(base), i.size or 0, _mtime_ns(i))
            for i in self.fs.get_file_info(selector)
            if i.type == pafs.FileType.File
        ]
        return sorted(entries, key=lambda e: e.path)

    def open_input(self, path: str) -> pa.NativeFile:
        """A random-access reader (ranged reads on object stores)."""
        return self.fs.open_input_file(self.full(path))

    def open_input_stream(self, path: str) -> pa.NativeFile:
        """A sequential reader of the bytes as stored (no decompression)."""
        return self.fs.open_input_stream(self.full(path), compression=None)

    def read_bytes(self, path: str) -> bytes:
        with self.open_input_stream(path) as stream:
            return stream.read()

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    def parquet_file(self, path: str) -> pq.ParquetFile:
        return pq.ParquetFile(self.open_input(path))

    def read_parquet(
        self, path: str, schema: pa.Schema | None = None, row_groups: list[int] | None = None
    ) -> pa.Table:
        """A Parquet file (or some of its row groups), cast to `schema` when given; a damaged
        file is a StoreError naming it."""
        try:
            with self.open_input(path) as handle:
                parquet = pq.ParquetFile(handle)
                columns = None if schema is None else schema.names
                table = (
                    parquet.read(columns=columns)
                    if row_groups is None
                    else parquet.read_row_groups(row_groups, columns=columns)
                )
        except (pa.ArrowInvalid, OSError) as exc:
            raise StoreError(f"cannot read Parquet file {self.uri_of(path)}: {exc}") from exc
        return table if schema is None else table.cast(schema)

    # -- writing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def open_output(self, path: str) -> Iterator[pa.NativeFile]:
        """A writer whose object appears whole when the block ends, or not at all if it fails.

        Locally: a temporary name in the same folder, renamed over `path` at the end (a rename
        replaces the directory entry, never a file another snapshot still uses).
        """
        if self.remote:
            with self.fs.open_output_stream(self.full(path)) as stream:
                yield stream
            return
        target = Path(self.full(path))
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
        try:
            with self.fs.open_output_stream(str(temporary)) as stream:
                yield stream
            temporary.replace(target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def write_bytes(self, path: str, data: bytes) -> None:
        with self.open_output(path) as stream:
            stream.write(data)

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode("utf-8"))

    def write_parquet(
        self, table: pa.Table, path: str, row_group_size: int | None = None, **options: object
    ) -> None:
        """`table` as one Parquet file (zstd), appearing whole or not at all."""
        with self.open_output(path) as stream:
            pq.write_table(
                table, stream, compression="zstd", row_group_size=row_group_size, **options
            )

    def delete(self, paths: list[str]) -> None:
        """Remove files; one already gone is not an error."""
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                self.fs.delete_file(self.full(path))

    def delete_prefix(self, prefix: str) -> None:
        """Remove everything under `prefix` (a folder, or the objects named under it)."""
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_dir(self.full(prefix))

    # -- the one conditional write ------------------------------------------------------------

    def read_versioned(self, path: str) -> tuple[bytes | None, str | None]:
        """An object's bytes and a version token for `write_if`; (None, None) if absent."""
        from mpg import storage_preconditions

        return storage_preconditions.read_versioned(self, path)

    def write_if(self, path: str, data: bytes, version: str | None) -> str:
        """Write `path` only if it is still at `version` (None: only if it does not exist);
        returns the new version, or raises PreconditionFailedError."""
        from mpg import storage_preconditions

        return storage_preconditions.write_if(self, path, data, version)


def _mtime_ns(info: pafs.FileInfo) -> int:
    return int(info.mtime_ns) if info.mtime_ns is not None else 0
