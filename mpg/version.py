"""Which code produced a table: the package version plus a digest of its source.

The digest covers every module, SQL file and data file of the installed package, so two runs
that report the same `code_version` ran the same definitions even when someone edited the code
without bumping the version.

    >>> code_version().startswith(__version__ + "+")
    True
"""

from __future__ import annotations

import functools
import hashlib
from importlib import import_module
from pathlib import Path

from mpg import __version__

_PACKAGES = ("mpg", "mpg.schemas", "mpg.transforms", "mpg.pipelines", "mpg.sql")
_SUFFIXES = (".py", ".sql", ".json")


@functools.cache
def code_version() -> str:
    digest = hashlib.sha256()
    for package in _PACKAGES:
        root = Path(import_module(package).__file__).parent
        for path in sorted(p for p in root.rglob("*") if p.suffix in _SUFFIXES):
            digest.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"
