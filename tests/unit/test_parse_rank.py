"""The optional `rank` of a runtime `step` span: which process of a multi-process job reported it
(docs/trace-format.md). Read on steps only, like `step` on the kinds that have one."""

from __future__ import annotations

import pytest

from mpg.transforms.parse import BlockParser
from tests.unit.test_parse import SPAN, _one, _with, parser  # noqa: F401  (parser: the fixture)


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        (_with(SPAN, rank=3), 3),
        (_with(SPAN, rank=0), 0),
        (_with(SPAN, rank=None), None),
        (_with(SPAN), None),
        (_with(SPAN, kind="init", step=..., rank=2), None),  # not read off steps
        (_with(SPAN, kind="init", step=..., rank="x"), None),  # so not checked either
    ],
)
def test_rank_is_an_optional_integer_of_step_spans(
    parser: BlockParser,  # noqa: F811
    line: str,
    rank: int | None,
) -> None:
    record, reason = _one(parser, "runtime", line)
    assert (reason, record["rank"]) == (None, rank)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (_with(SPAN, rank=-1), "out of range: rank must be >= 0"),
        (_with(SPAN, rank="0"), "wrong type: rank must be an integer"),
        (_with(SPAN, rank=1.5), "wrong type: rank must be an integer"),
        (_with(SPAN, rank=2**64), "out of range: rank does not fit in 64 bits"),
    ],
)
def test_an_unusable_rank_is_quarantined(
    parser: BlockParser,  # noqa: F811
    line: str,
    reason: str,
) -> None:
    assert _one(parser, "runtime", line) == (None, reason)
