"""A writer's lease: at most one `mpg run` writes under an output root at a time.

    with hold_lease(Storage("gs://bucket/fleet"), "_lease.json", owner=run_id, lease_s=60) as lease:
        ...                        # compute, write files
        lease.check()              # raises LeaseLostError if another run took the root over
        store.write_if(...)        # publish (the pointer's own precondition still guards it)

Object stores (GCS, S3) have no locks, only conditional writes, so the lease is an object:
- taken by creating it on the condition that it does not exist (`write_if(..., None)`), holding
  a JSON record of the holder: owner (the run id), host, pid, since when, and until when;
- refused with `LeaseHeldError` (one line naming the holder) while an unexpired record exists;
- an expired record (its holder was killed, or lost its network) is taken over on the condition
  that it is still the version read, so of two runs taking over at once exactly one wins; so is
  the record of a holder on this same host whose process is gone (killed: a rerun on the machine
  that ran it need not wait the lease out);
- renewed by a daemon thread every `lease_s / 3`, again on the condition of the version it last
  wrote. If a renewal finds another version, or cannot write before the lease runs out, the
  holder has lost it: renewals stop, `lease.lost` is set, and `lease.check()` raises, so the
  holder can refuse to commit;
- released at exit by deleting it, only if it is still the version this holder wrote.

Expiry compares the record's `expires_at` (the holder's wall clock) with the reader's wall clock:
hosts must agree on the time to well within `lease_s` (NTP, as on every cloud VM).

Local roots use an exclusive `fcntl.flock` on the lease file instead, held for the whole block.
The kernel frees it when the holder dies, so there is no expiry and no renewal (`lease_s` is
unused, `lost` never set); the file records the holder for the refusal message and is deleted at
exit. A lock is only as shared as the filesystem: NFS shares it between machines, a laptop's
folder does not.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from mpg.core.errors import StoreError, UserError
from mpg.storage import preconditions
from mpg.storage.errors import PreconditionFailedError
from mpg.storage.root import Storage

_log = logging.getLogger(__name__)
# What the lease's writes are doing, as their errors say.
TAKING, RENEWING = "taking the lease", "renewing the lease"
# How often a refused local taker looks for the holder's record (every 50 ms).
_LOCAL_RECORD_POLLS = 20


class LeaseHeldError(UserError):
    """Another run holds the output root's lease: wait for it, or for its lease to expire."""


class LeaseLostError(StoreError):
    """This run's lease was taken over (or could not be renewed in time): it must not commit."""


@dataclass(frozen=True)
class LeaseRecord:
    """Who holds a lease, as stored in the lease object (times are seconds since the epoch)."""

    owner: str
    host: str
    pid: int
    since: float
    expires_at: float

    @classmethod
    def new(cls, owner: str, lease_s: float) -> LeaseRecord:
        now = time.time()
        return cls(owner, socket.gethostname(), os.getpid(), now, now + lease_s)

    def alive(self) -> bool:
        """False when the holder ran on this host and its process is gone (killed): its lease
        need not be waited out. A holder elsewhere counts as alive until its lease expires."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # a process of another user has that pid
            return True
        return True

    def renewed(self, lease_s: float) -> LeaseRecord:
        return LeaseRecord(self.owner, self.host, self.pid, self.since, time.time() + lease_s)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def parse(cls, data: bytes) -> LeaseRecord | None:
        """The record in `data`; None if it is not one (a damaged object counts as expired)."""
        try:
            fields = json.loads(data)
            return cls(
                str(fields["owner"]),
                str(fields["host"]),
                int(fields["pid"]),
                float(fields["since"]),
                float(fields["expires_at"]),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def describe(self, expiring: bool = True) -> str:
        """The holder, for messages (a local lock does not expire: no "until")."""
        holder = f"run {self.owner} (host {self.host}, pid {self.pid}) since {_utc(self.since)}"
        return f"{holder}, lease until {_utc(self.expires_at)}" if expiring else holder


class Lease:
    """A held lease: `lost` turns true (and `check()` raises) once another writer has it, or
    once it expired without a renewal (a renewal stuck in retries is no renewal)."""

    def __init__(
        self, storage: Storage, path: str, record: LeaseRecord, version: str | None = None
    ) -> None:
        self.storage = storage
        self.path = path
        self.record = record
        # The version of the lease object this holder last wrote (None for a local lock).
        self.version = version
        self._lost = threading.Event()
        self._reason = ""

    @property
    def lost(self) -> bool:
        if self._lost.is_set():
            return True
        if self.version is not None and time.time() >= self.record.expires_at:
            self._lose("expired before it was renewed")
        return self._lost.is_set()

    def check(self) -> None:
        """Raise LeaseLostError if this holder no longer holds the lease (call before a commit)."""
        if self.lost:
            raise LeaseLostError(
                f"{self.storage.uri_of(self.path)}: lease of run {self.record.owner} lost "
                f"({self._reason}); not committing"
            )

    def _lose(self, reason: str) -> None:
        self._reason = reason
        self._lost.set()


@contextlib.contextmanager
def hold_lease(storage: Storage, path: str, owner: str, lease_s: float = 60.0) -> Iterator[Lease]:
    """Hold the lease `path` under `storage` for the block; LeaseHeldError if another run does.

    `owner` names this run in the record (and in the message another run gets).
    """
    if lease_s <= 0:
        raise ValueError(f"lease_s must be positive, not {lease_s}")
    holding = _hold_local if storage.scheme == "file" else _hold_remote
    with holding(storage, path, owner, lease_s) as lease:
        yield lease


# -- object stores -----------------------------------------------------------------------------


@contextlib.contextmanager
def _hold_remote(storage: Storage, path: str, owner: str, lease_s: float) -> Iterator[Lease]:
    lease = Lease(storage, path, *_take(storage, path, owner, lease_s))
    stop = threading.Event()
    renewer = threading.Thread(
        target=_renew,
        args=(lease, lease_s, stop),
        name=f"mpg-lease-{path}",
        daemon=True,
    )
    renewer.start()
    try:
        yield lease
    finally:
        stop.set()
        renewer.join()
        if not lease._lost.is_set():
            _release(lease)


def _take(storage: Storage, path: str, owner: str, lease_s: float) -> tuple[LeaseRecord, str]:
    """Write this run's record as the lease if there is none or it expired: the record and its
    version; LeaseHeldError if another run holds it."""
    data, version = storage.read_versioned(path)  # reading it is "reading" it
    if data is not None:
        holder = LeaseRecord.parse(data)
        if holder is not None and holder.expires_at > time.time() and holder.alive():
            raise _held(storage, path, holder)
    # Timed from now, not from the call: building the first client can take a second.
    record = LeaseRecord.new(owner, lease_s)
    try:
        return record, storage.write_if(path, record.to_bytes(), version, TAKING)
    except PreconditionFailedError:
        # Another run created it, or took it over, first: name it.
        data, _ = storage.read_versioned(path)
        holder = LeaseRecord.parse(data) if data is not None else None
        if holder is None:
            raise LeaseHeldError(
                f"{storage.uri_of(path)}: another run took the lease at the same time"
            ) from None
        raise _held(storage, path, holder) from None


def _renew(lease: Lease, lease_s: float, stop: threading.Event) -> None:
    """Extend the lease every lease_s / 3 until `stop`; on losing it, flag `lease` and return."""
    while not stop.wait(lease_s / 3):
        record = lease.record.renewed(lease_s)
        try:
            version = lease.storage.write_if(lease.path, record.to_bytes(), lease.version, RENEWING)
        except PreconditionFailedError:
            lease._lose("another run took it over")
            return
        except StoreError as exc:
            # A blip: try again next time, unless the lease has run out meanwhile.
            if lease.lost:
                lease._lose(f"not renewed before it expired: {exc}")
                return
            continue
        lease.version, lease.record = version, record


def _release(lease: Lease) -> None:
    """Delete the lease if it is still the one this holder wrote. A failure only delays the
    next run until the lease expires, so it is logged, not raised over the block's outcome."""
    try:
        preconditions.delete_if(lease.storage, lease.path, str(lease.version))
    except StoreError as exc:
        _log.warning("could not release the lease: %s (it expires by itself)", exc)


def _held(storage: Storage, path: str, holder: LeaseRecord) -> LeaseHeldError:
    if not storage.remote:
        return LeaseHeldError(
            f"{storage.uri_of(path)} is locked by {holder.describe(expiring=False)}: "
            "wait for that run to finish"
        )
    return LeaseHeldError(
        f"{storage.uri_of(path)} is held by {holder.describe()}: wait for that run to finish "
        "(or, if it was killed, for its lease to expire)"
    )


def _utc(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- local folders -----------------------------------------------------------------------------


@contextlib.contextmanager
def _hold_local(storage: Storage, path: str, owner: str, lease_s: float) -> Iterator[Lease]:
    target = Path(storage.full(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = _lock_file(storage, path, target)
    record = LeaseRecord.new(owner, lease_s)
    try:
        handle.truncate(0)
        handle.write(record.to_bytes().decode())
        handle.flush()
        yield Lease(storage, path, record)
    finally:
        # Unlink while still locked: a run waiting on this inode finds it gone and retries.
        target.unlink(missing_ok=True)
        handle.close()


def _lock_file(storage: Storage, path: str, target: Path) -> IO[str]:
    """The lease file, open and exclusively locked; LeaseHeldError if another process has it."""
    while True:
        handle = target.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _local_holder(handle)
            handle.close()
            if holder is None:
                raise LeaseHeldError(
                    f"{storage.uri_of(path)} is locked by another process: wait for it to finish"
                ) from None
            raise _held(storage, path, holder) from None
        # Locked, but maybe a file its last holder already unlinked: then lock the new one.
        try:
            if target.stat().st_ino == os.fstat(handle.fileno()).st_ino:
                return handle
        except FileNotFoundError:
            pass
        handle.close()


def _local_holder(handle: IO[str]) -> LeaseRecord | None:
    """The record in a lease file another process has locked. It writes the record just after
    locking, so give it a moment (a second at most) before naming nobody."""
    for _ in range(_LOCAL_RECORD_POLLS):
        handle.seek(0)
        holder = LeaseRecord.parse(handle.read().encode())
        if holder is not None:
            return holder
        time.sleep(0.05)
    return None
