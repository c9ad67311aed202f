"""Conditional writes: the compare-and-swap that makes one writer win.

pyarrow's filesystems cannot write on a condition, so each backend does it its own way:
- local: the version is the SHA-256 of the content; an exclusive `flock` on a sidecar file
  serialises the read-compare-rename of concurrent writers on one machine (or NFS with locks);
- GCS (google-cloud-storage): the object's generation, written with `if_generation_match`
  (0: must not exist). Data up to 8 MiB goes up in one simple (multipart) upload, the kind on
  which fake-gcs-server also honours the precondition; real GCS honours it on any upload.
- S3 (boto3): the object's ETag, written with `If-Match` (`If-None-Match: *`: must not exist).
  S3 answers 412 when the condition fails and 409 when a concurrent conditional write to the
  same key is in flight: both mean another writer won.

Both clients retry a conditional write that failed in transit (docs/decisions.md, "Retries"). A
write that succeeded but whose answer was lost (a reset connection, a timeout) is then retried
against its own result and refused: "precondition failed". So every conditional write carries a
token of its own in the object's metadata (`mpg-write`), and a refusal is checked against the
object now there: if it carries this write's token, the write was ours and succeeded.

`gcp-storage-emulator` accepts every conditional write (it ignores preconditions): test races on
fake-gcs-server or moto.

Clients come from `mpg.storage.backends`, configured from the same environment as the Storage's
pyarrow filesystem; their errors become one-line StoreErrors naming the URI
(`Storage.reporting`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpg.core.errors import StoreError
from mpg.storage import backends
from mpg.storage.errors import DELETING, READING, WRITING, PreconditionFailedError

if TYPE_CHECKING:
    from mpg.storage.root import Storage

# A GCS read races a writer between reading the generation and the bytes: try again this often.
_READ_ATTEMPTS = 5
# The object metadata key of a conditional write's own token.
WRITE_TOKEN = "mpg-write"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def _local_lock(target: Path) -> Iterator[None]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.with_name(f".{target.name}.lock").open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _read_local(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None


def _lost(store: Storage, path: str) -> StoreError:
    return PreconditionFailedError(
        f"{store.uri_of(path)} changed since it was read (another writer published)"
    )


def _no_bucket(store: Storage, path: str, doing: str) -> StoreError:
    reason = f"{backends.NO_SUCH_BUCKET} {store.scheme}://{store.bucket}"
    return StoreError(store.failed(path, doing, reason, transient=False))


def _bucket_and_key(store: Storage, path: str) -> tuple[str, str]:
    bucket, _, key = store.full(path).partition("/")
    return bucket, key


def _s3_code(exc: Exception) -> str:
    """The error code of a botocore ClientError ("" for anything else)."""
    response: dict[str, Any] = getattr(exc, "response", {}) or {}
    return str(response.get("Error", {}).get("Code", ""))


# -- reading -----------------------------------------------------------------------------------


def read_versioned(store: Storage, path: str) -> tuple[bytes | None, str | None]:
    """An object's bytes and the version `write_if` compares; (None, None) if absent."""
    if store.scheme == "file":
        data = _read_local(Path(store.full(path)))
        return data, None if data is None else _digest(data)
    with store.reporting(path, READING):
        if store.scheme == "gs":
            return _read_gcs(store, path)
        return _read_s3(store, path)


def _read_gcs(store: Storage, path: str) -> tuple[bytes | None, str | None]:
    from google.api_core.exceptions import NotFound, PreconditionFailed

    bucket, key = _bucket_and_key(store, path)
    client = backends.gcs_client()
    for _ in range(_READ_ATTEMPTS):
        try:
            blob = client.bucket(bucket).get_blob(key)
            if blob is None:
                return None, None
            # Taken before the download, which resets it from response headers that
            # gcp-storage-emulator does not send.
            generation = blob.generation
            # The bytes of exactly the generation read: a writer in between fails this read.
            return blob.download_as_bytes(if_generation_match=generation), str(generation)
        except NotFound:
            if client.lookup_bucket(bucket) is None:
                raise _no_bucket(store, path, READING) from None
            return None, None
        except PreconditionFailed:
            continue
    reason = f"changed {_READ_ATTEMPTS} times while being read"
    raise StoreError(store.failed(path, READING, reason, transient=True))


def _read_s3(store: Storage, path: str) -> tuple[bytes | None, str | None]:
    bucket, key = _bucket_and_key(store, path)
    client = backends.s3_client()
    try:
        answer = client.get_object(Bucket=bucket, Key=key)
    except client.exceptions.NoSuchKey:
        return None, None
    with answer["Body"] as body:
        return body.read(), answer["ETag"]


# -- writing -----------------------------------------------------------------------------------


def write_if(
    store: Storage, path: str, data: bytes, version: str | None, doing: str = WRITING
) -> str:
    """Write `data` if `path` is still at `version` (None: absent); the new version, or
    PreconditionFailedError. `doing` names the write in error messages ("taking the lease")."""
    if store.scheme == "file":
        target = Path(store.full(path))
        with _local_lock(target):
            current = _read_local(target)
            found = None if current is None else _digest(current)
            if found != version:
                raise _lost(store, path)
            store.write_bytes(path, data)
        return _digest(data)
    token = uuid.uuid4().hex
    with store.reporting(path, doing):
        if store.scheme == "gs":
            return _write_gcs(store, path, data, version, token, doing)
        return _write_s3(store, path, data, version, token)


def _write_gcs(
    store: Storage, path: str, data: bytes, version: str | None, token: str, doing: str
) -> str:
    from google.api_core.exceptions import NotFound, PreconditionFailed

    bucket, key = _bucket_and_key(store, path)
    blob = backends.gcs_client().bucket(bucket).blob(key)
    blob.metadata = {WRITE_TOKEN: token}
    try:
        blob.upload_from_string(data, if_generation_match=int(version or 0))
    except PreconditionFailed:
        ours = backends.gcs_client().bucket(bucket).get_blob(key)
        if ours is not None and (ours.metadata or {}).get(WRITE_TOKEN) == token:
            return str(ours.generation)  # a retry of our own write, which had succeeded
        raise _lost(store, path) from None
    except NotFound:
        raise _no_bucket(store, path, doing) from None
    if blob.generation is None:
        # gcp-storage-emulator's upload answer lacks it (GCS's never does): ask. Only that
        # emulator gets here, and it ignores preconditions anyway.
        blob.reload()
    return str(blob.generation)


def _write_s3(store: Storage, path: str, data: bytes, version: str | None, token: str) -> str:
    bucket, key = _bucket_and_key(store, path)
    condition = {"IfNoneMatch": "*"} if version is None else {"IfMatch": version}
    client = backends.s3_client()
    try:
        answer = client.put_object(
            Bucket=bucket, Key=key, Body=data, Metadata={WRITE_TOKEN: token}, **condition
        )
    except Exception as exc:
        if _s3_code(exc) not in ("PreconditionFailed", "ConditionalRequestConflict", "412", "409"):
            raise
        try:
            ours = client.head_object(Bucket=bucket, Key=key)
        except client.exceptions.ClientError:
            raise _lost(store, path) from None
        if ours.get("Metadata", {}).get(WRITE_TOKEN) == token:
            return str(ours["ETag"])  # a retry of our own write, which had succeeded
        raise _lost(store, path) from None
    return str(answer["ETag"])


def delete_if(store: Storage, path: str, version: str) -> bool:
    """Delete `path` if it is still at `version`; False (and nothing deleted) if it is not.

    GCS checks the generation server-side, S3 the ETag (`If-Match` on delete); where a service
    or emulator ignores that, the version is checked just before (a narrow window, which is
    why a lease only releases what it still holds).
    """
    with store.reporting(path, DELETING):
        if store.scheme == "file":
            target = Path(store.full(path))
            with _local_lock(target):
                current = _read_local(target)
                if current is None or _digest(current) != version:
                    return False
                target.unlink()
            return True
        if read_versioned(store, path)[1] != version:
            return False
        bucket, key = _bucket_and_key(store, path)
        if store.scheme == "gs":
            from google.api_core.exceptions import NotFound, PreconditionFailed

            blob = backends.gcs_client().bucket(bucket).blob(key)
            try:
                blob.delete(if_generation_match=int(version))
            except (PreconditionFailed, NotFound):
                return False
            return True
        try:
            backends.s3_client().delete_object(Bucket=bucket, Key=key, IfMatch=version)
        except Exception as exc:
            if _s3_code(exc) in ("PreconditionFailed", "412", "NoSuchKey"):
                return False
            raise
        return True
