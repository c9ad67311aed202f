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
    """Each package's files are hashed once, as its own: installed, `mpg.schemas` and the others
    lie inside `mpg/`, in a checkout beside it, and both must give the same version."""
    digest = hashlib.sha256()
    roots = {package: Path(import_module(package).__file__).parent for package in _PACKAGES}
    for package, root in roots.items():
        nested = [r for other, r in roots.items() if other != package and r.is_relative_to(root)]
        for path in sorted(
            p
            for p in root.rglob("*")
            if p.suffix in _SUFFIXES and not any(p.is_relative_to(n) for n in nested)
        ):
            digest.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"
