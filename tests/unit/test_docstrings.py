"""The examples in module docstrings run, so they cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "mpg.sql.files",
        "mpg.definitions.catalog",
        "mpg.definitions.costs",
        "mpg.schemas",
        "mpg.schemas.ddl",
        "mpg.schemas.bigquery",
        "mpg.simulate",
        "mpg.explain.model",
        "mpg.quality.declare",
        "mpg.quality.arrow_checks",
        "mpg.quality.report",
        "mpg.report.page",
        "mpg.core.version",
        "mpg.output.views",
        "mpg.sql.bigquery_dialect",
        "mpg.transforms.parse_sql",
    ],
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
