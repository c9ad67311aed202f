"""Where things are, decided before anything heavy is imported: whether a location is on object
storage, the local path of one that is not, and the name a reader looks for first.

`mpg.storage` does every read and write; this module only parses locations, with the standard
library, so that a reader can say "no published tables in DIR" as fast as Python starts
(tests/e2e/test_startup.py).

    >>> is_remote("gs://bucket/fleet"), local_path("file:///tmp/out"), local_path("out")
    (True, '/tmp/out', 'out')
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

# Object stores mpg reads and writes (`mpg.storage`); anything else is a local path.
SCHEMES = ("gs", "s3")
# The current snapshot's pointer at the top of an output folder (`mpg.output.store`).
POINTER = "current.json"


def is_remote(uri: str | os.PathLike[str]) -> bool:
    return urlparse(os.fspath(uri)).scheme in SCHEMES


def local_path(uri: str | os.PathLike[str]) -> str:
    """The path of a local location, given as a path or a `file://` URI."""
    parsed = urlparse(os.fspath(uri))
    return parsed.path if parsed.scheme == "file" else os.fspath(uri)
