"""An output folder's own configuration: the optional `DIR/mpg.toml` beside the tables it governs.

    [metrics]
    current = "v2"   # the metric version the *_current views show (default: v1)

It lives in the output folder rather than in a flag so that which version dashboards see is a
property of the published tables, kept by every later run (and by `mpg explain`), not something
each invocation must repeat. A missing file means the defaults; a file that cannot be read as
this is a user error naming the file, never a silent default.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpg.errors import OptionsError
from mpg.metrics import DEFAULT_METRIC_VERSION, METRIC_VERSIONS
from mpg.storage import Storage

CONFIG_FILE = "mpg.toml"
_KNOWN = {"metrics": {"current"}}  # section -> its keys: anything else is a typo, refused


@dataclass(frozen=True)
class OutputConfig:
    current_metric_version: str = DEFAULT_METRIC_VERSION

    @property
    def metric_versions(self) -> tuple[str, ...]:
        """What a run computes when not told: v1, and the current version beside it (rule 6:
        a new version is written beside the old one and the `*_current` views switch)."""
        return tuple(dict.fromkeys((DEFAULT_METRIC_VERSION, self.current_metric_version)))


def read_config(out: str | Path) -> OutputConfig:
    """`out/mpg.toml` (`out` a folder or a gs:// or s3:// prefix), validated; the defaults where
    there is no such file."""
    store = Storage(out)
    path = store.uri_of(CONFIG_FILE)
    if store.info(CONFIG_FILE) is None:  # no file, or no folder yet (or not one)
        return OutputConfig()
    try:
        doc = tomllib.loads(store.read_text(CONFIG_FILE))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise OptionsError(f"{path}: cannot be read as TOML: {exc}") from exc
    _check_keys(path, doc)
    current = doc.get("metrics", {}).get("current", DEFAULT_METRIC_VERSION)
    if not isinstance(current, str) or current not in METRIC_VERSIONS:
        known = ", ".join(METRIC_VERSIONS)
        raise OptionsError(
            f"{path}: [metrics] current = {current!r} is not a metric version (known: {known})"
        )
    return OutputConfig(current_metric_version=current)


def metric_version_to_read(out: str | Path, asked: str | None) -> str:
    """The metric version whose figures a reader of `out` shows: the one asked for (a
    `--metric-version`), else `out`'s current one; an unknown version is a user error."""
    version = asked or read_config(out).current_metric_version
    if version not in METRIC_VERSIONS:
        known = ", ".join(METRIC_VERSIONS)
        raise OptionsError(f"unknown metric version {version} (known: {known})")
    return version


def _check_keys(path: str, doc: dict[str, Any]) -> None:
    """Refuse sections and keys this version does not know: a misspelt `current` must not
    quietly leave the views on the default."""
    for section, body in doc.items():
        if section not in _KNOWN or not isinstance(body, dict):
            raise OptionsError(f"{path}: unknown entry {section!r} (known: [metrics] current)")
        unknown = sorted(set(body) - _KNOWN[section])
        if unknown:
            raise OptionsError(f"{path}: unknown key [{section}] {unknown[0]!r} (known: current)")
