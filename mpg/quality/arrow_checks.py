"""The checks mpg makes itself on the Arrow table, and the JSON sample of unexpected rows.

Column types and required values are the record store's schema, and Arrow knows both exactly:
a column's type is in the table's schema and its nulls are counted in its metadata. Great
Expectations sees only the pandas frame it is handed (where a nullable int64 column becomes
float64) and spends ~10 ms of fixed cost per expectation per batch, which for the ~30 required
columns of three sources would dominate each job bucket's validation. So these two expectation
types are evaluated here, with GX's names and meaning (a row condition included), and every other
one by GX.

    >>> import pyarrow as pa
    >>> from mpg.quality.declare import not_null
    >>> check(pa.table({"a": [1, None]}), not_null("a")).unexpected_count
    1
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import pyarrow as pa
import pyarrow.compute as pc

from mpg.quality.declare import ARROW_TYPE, NOT_NULL, Expect, Target

CHECKED_HERE = (ARROW_TYPE, NOT_NULL)

# Unexpected rows kept per expectation: the first ones in the frame's index order.
SAMPLE_SIZE = 5


@dataclass(frozen=True)
class Finding:
    """What checking one expectation on one frame found; `rows`: the first unexpected ones."""

    success: bool
    element_count: int
    unexpected_count: int | None = None
    rows: tuple[int, ...] = ()
    observed: str | None = None


def _json_value(value: object) -> object:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def sample_json(frame: pa.Table, target: Target, expect: Expect, rows: Sequence[int]) -> str | None:
    """The rows of `frame` at `rows` as JSON: the target's index columns, then the checked ones."""
    if not rows:
        return None
    names = [c for c in dict.fromkeys((*target.index, *expect.columns)) if c in frame.column_names]
    picked = frame.take(pa.array(rows, pa.int64())).select(names).to_pylist()
    return json.dumps([{k: _json_value(v) for k, v in row.items()} for row in picked])


def _type_found(frame: pa.Table, expect: Expect) -> Finding:
    column = str(expect.kwargs["column"])
    actual = str(frame.schema.field(column).type) if column in frame.column_names else "missing"
    return Finding(actual == expect.kwargs["type_"], frame.num_rows, observed=actual)


def _nulls_found(frame: pa.Table, expect: Expect) -> Finding:
    column = str(expect.kwargs["column"])
    if column not in frame.column_names:
        return Finding(False, frame.num_rows, observed="missing column")
    nulls = pc.is_null(frame.column(column))
    if expect.when is not None:
        applies = pc.is_in(frame.column(expect.when[0]), pa.array(expect.when[1]))
        nulls = pc.and_(nulls, pc.fill_null(applies, False))
        checked = pc.sum(applies).as_py() or 0
    else:
        checked = frame.num_rows
    count = pc.sum(nulls).as_py() or 0
    rows = pc.indices_nonzero(nulls.combine_chunks()).slice(0, SAMPLE_SIZE).to_pylist()
    return Finding(count == 0, checked, count, tuple(rows))


def check(frame: pa.Table, expect: Expect) -> Finding:
    """What one expectation of CHECKED_HERE found on `frame`."""
    if expect.expectation == ARROW_TYPE:
        return _type_found(frame, expect)
    return _nulls_found(frame, expect)
