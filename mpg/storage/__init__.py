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
`STORAGE_EMULATOR_HOST` (GCS, anonymous) and `AWS_ENDPOINT_URL` (S3); `mpg.storage.backends`
builds every client from them. Worker processes inherit the environment, so they reach the same
endpoint as the launcher.

Every whole-object write is atomic: a reader sees the old object or the new one. Object stores
give that for a single PUT, so `open_output` on them writes a local temporary file and uploads it
only when the block succeeds; locally it writes a temporary name beside the target and renames it
into place.

Object stores have no folders: a "directory" is a prefix that some object's name continues with
`/`, so `is_dir` is true only while something lies under it, listing a missing prefix is empty,
and deleting the last object under a prefix makes the prefix vanish (S3 deletes go through boto3:
pyarrow's would leave an empty `prefix/` marker object behind). Modification times are the
service's: microseconds on GCS, whole seconds on S3.

Every failure of the store is one line saying what was being done to which object, why, and
whether a rerun can be expected to pass:

    writing gs://b/out/tables/x/data/day=2026-11-20/r-0.parquet: the storage service lost the
    upload session (HTTP 404 to it); transient: a rerun can be expected to pass

A failure that passes (a busy or unavailable service still failing after the clients' retries, a
dropped connection, a lost upload session: docs/decisions.md, "Retries") is a
`TransientStoreError`; a lasting one (no such bucket, no credentials, no permission) a
`StoreError`; a missing file a `NotFoundError`, which is also a `FileNotFoundError`.

The package, lowest module first: `errors` (what failures are called), `backends` (each service's
clients and how their errors read), `reads` (ranged, retried reads), `preconditions` (the
conditional write), `root` (`Storage`), `lock` (the writer's lease, `mpg.storage.lock`). Each
imports only modules before it.
"""

from mpg.storage.errors import (
    COMMITTING,
    DELETING,
    LASTING,
    LISTING,
    READING,
    TRANSIENT,
    WRITING,
    NotFoundError,
    PreconditionFailedError,
    TransientStoreError,
)
from mpg.storage.root import Entry, Storage

__all__ = [
    "COMMITTING",
    "DELETING",
    "LASTING",
    "LISTING",
    "READING",
    "TRANSIENT",
    "WRITING",
    "Entry",
    "NotFoundError",
    "PreconditionFailedError",
    "Storage",
    "TransientStoreError",
]
