"""A package's public names, imported from their modules when first used (PEP 562).

`mpg.compare` and `mpg.explain` re-export what their modules define; importing those modules up
front would load DuckDB and Polars for every `mpg` command that only needs the package's options.

    >>> getattr_ = lazy_exports("pkg", {"sqrt": "math"})
    >>> getattr_("sqrt")(9.0)
    3.0
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `exports[name]` (a module path) and returns its
    attribute `name`."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (the name Python looks for)
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    return __getattr__
