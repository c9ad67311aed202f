"""What the store's failures are called: the operation a message names, whether a rerun can be
expected to pass, and the StoreError subclasses. The lowest module of `mpg.storage`: `root` (the
Storage), `preconditions` and `lock` import it, and it imports none of them."""

from __future__ import annotations

from mpg.core.errors import StoreError

# What a failed operation was doing, as its message says.
READING, WRITING, LISTING, DELETING = "reading", "writing", "listing", "deleting"
COMMITTING = "committing"
TRANSIENT = "transient: a rerun can be expected to pass"
LASTING = "not transient: a rerun will fail the same way until this is fixed"


class PreconditionFailedError(StoreError):
    """A conditional write found the object changed since it was read (another writer won)."""


class NotFoundError(StoreError, FileNotFoundError):
    """A file that is not there: a user error with one line, and still a FileNotFoundError for
    code that expects one."""


class TransientStoreError(StoreError):
    """The store failed in a way that passes (busy, unavailable, a dropped connection, a lost
    upload session) and went on failing through the clients' retries: a rerun can be expected to
    pass."""
