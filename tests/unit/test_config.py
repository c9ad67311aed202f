"""DIR/mpg.toml's metric settings (`mpg.definitions.config`): the current version, v1 without the
file, and the versions a run computes by default. (A bad file stopping a run in one line:
tests/e2e/test_current_views.py; prices, power and PUE: tests/unit/test_costs.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from mpg.definitions.config import OutputConfig, read_config


@pytest.mark.parametrize(
    ("text", "config"),
    [
        (None, OutputConfig("v1")),
        ("", OutputConfig("v1")),
        ("[metrics]\n", OutputConfig("v1")),
        ('[metrics]\ncurrent = "v2"\n', OutputConfig("v2")),
    ],
)
def test_read_config(tmp_path: Path, text: str | None, config: OutputConfig) -> None:
    if text is not None:
        (tmp_path / "mpg.toml").write_text(text)
    assert read_config(tmp_path) == config


@pytest.mark.parametrize(("current", "versions"), [("v1", ("v1",)), ("v2", ("v1", "v2"))])
def test_a_run_computes_v1_and_the_current_version_by_default(
    current: str, versions: tuple[str, ...]
) -> None:
    assert OutputConfig(current).metric_versions == versions
