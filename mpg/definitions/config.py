"""An output folder's own configuration: the optional `DIR/mpg.toml` beside the tables it governs.

    [metrics]
    current = "v2"   # the metric version the *_current views show (default: v1)
    [prices]         # USD per chip-hour by chip generation (default: mpg/definitions/costs.v1.json)
    "tpu-v5p" = 4.20
    [power]          # watts per chip by chip generation (default: mpg/definitions/costs.v1.json)
    "tpu-v5p" = 450
    [energy]
    pue = 1.1        # power usage effectiveness (default: mpg/definitions/costs.v1.json)

It lives in the output folder rather than in a flag so that which version dashboards see is a
property of the published tables, kept by every later run (and by `mpg explain`), not something
each invocation must repeat. A missing file means the defaults; a file that cannot be read as
this is a user error naming the file, never a silent default.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpg.core.errors import OptionsError
from mpg.definitions.metrics import DEFAULT_METRIC_VERSION, METRIC_VERSIONS

CONFIG_FILE = "mpg.toml"
# section -> its keys (None: chip generations): anything else is a typo, refused
_KNOWN: dict[str, set[str] | None] = {
    "metrics": {"current"},
    "prices": None,
    "power": None,
    "energy": {"pue"},
}
_KNOWN_TEXT = "[metrics] current, [prices], [power], [energy] pue"
# What a number in each section means, and the least it may be.
_RATES = {"prices": ("USD per chip-hour", 0.0), "power": ("watts per chip", 0.0)}


@dataclass(frozen=True)
class OutputConfig:
    current_metric_version: str = DEFAULT_METRIC_VERSION
    prices: tuple[tuple[str, float], ...] = ()  # (chip generation, USD per chip-hour)
    power: tuple[tuple[str, float], ...] = ()  # (chip generation, watts per chip)
    pue: float | None = None

    @property
    def metric_versions(self) -> tuple[str, ...]:
        """What a run computes when not told: v1, and the current version beside it (rule 6:
        a new version is written beside the old one and the `*_current` views switch)."""
        return tuple(dict.fromkeys((DEFAULT_METRIC_VERSION, self.current_metric_version)))


def read_config(out: str | Path) -> OutputConfig:
    """`out/mpg.toml` (`out` a folder or a gs:// or s3:// prefix), validated; the defaults where
    there is no such file."""
    from mpg.storage import Storage  # pyarrow: not for a command's --help

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
    return OutputConfig(
        current_metric_version=current,
        prices=_rates(path, doc, "prices"),
        power=_rates(path, doc, "power"),
        pue=_pue(path, doc),
    )


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _rates(path: Path, doc: dict[str, Any], section: str) -> tuple[tuple[str, float], ...]:
    """[prices] or [power]: a number per chip generation of the catalog. A price may be 0 (chips
    the fleet does not pay for by the hour); nothing may be negative, NaN or infinite."""
    unit, least = _RATES[section]
    from mpg.definitions.catalog import load_catalog  # pyarrow: only where prices are given

    generations = load_catalog().generations
    rates = []
    for generation, value in doc.get(section, {}).items():
        if generation not in generations:
            raise OptionsError(
                f"{path}: [{section}] {generation!r} is not a chip generation "
                f"(known: {', '.join(generations)})"
            )
        if not _finite(value) or value < least:
            raise OptionsError(
                f"{path}: [{section}] {generation!r} = {value!r} is not a number of {unit} "
                f">= {least:g}"
            )
        rates.append((generation, float(value)))
    return tuple(sorted(rates))


def _pue(path: Path, doc: dict[str, Any]) -> float | None:
    if "pue" not in doc.get("energy", {}):
        return None
    pue = doc["energy"]["pue"]
    if not _finite(pue) or pue < 1:
        raise OptionsError(f"{path}: [energy] pue = {pue!r} is not a number >= 1")
    return float(pue)


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
    quietly leave the views on the default. (Keys of [prices] and [power] are checked against
    the chip catalog where they are read.)"""
    for section, body in doc.items():
        if section not in _KNOWN or not isinstance(body, dict):
            raise OptionsError(f"{path}: unknown entry {section!r} (known: {_KNOWN_TEXT})")
        keys = _KNOWN[section]
        unknown = sorted(set(body) - keys) if keys is not None else []
        if unknown:
            raise OptionsError(
                f"{path}: unknown key [{section}] {unknown[0]!r} (known: {', '.join(sorted(keys))})"
            )
