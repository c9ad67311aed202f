"""Every declared expectation evaluated on an Arrow table in one vectorised pass, as Great
Expectations defines it; and the JSON sample of unexpected rows.

The suites are declared with Great Expectations' expectation types and arguments
(`mpg.quality.declare`), and GX is their reference: tests/e2e/test_quality.py checks this module
against GX itself (`mpg.quality.gx`) on frames with planted nulls, NaNs, infinities, duplicates
and empty tables, result row for result row. What the run does not pay is GX's start (importing
it takes 2.5-4 s of a 2-core machine) and its fixed ~5-15 ms per expectation and frame: here a
target's expectations are one Polars `select` of unexpected-row counts over the frame (Polars is
in every step that calls this already), and only a failed one is looked at again for its first
rows. GX's meaning, kept exactly:
- a value GX's pandas engine reads as missing (null, and NaN in a float column) is outside the
  domain of a column expectation: not checked, not unexpected, but counted in `element_count`;
- `ignore_row_if` drops a row from a pair or compound expectation's domain when either/any
  (or both/all) of its values are missing; compound uniqueness flags every copy of a repeated
  combination, a missing value counting as a value;
- `element_count` is the frame's rows; the unexpected rows sampled are the first by the target's
  index (NULLs first; rows that tie, in frame order), so a frame need not be sorted: only its
  few unexpected rows are.
Two types GX would see only through pandas (where a nullable int64 column becomes float64) are
mpg's own and never GX's: `expect_column_type_to_be` reads the Arrow schema, and
`expect_column_values_to_not_be_null` counts Arrow nulls and takes a row condition (`when`).

    >>> import pyarrow as pa
    >>> from mpg.quality.declare import Target, between, not_null
    >>> target = Target("t", ("a",), (not_null("a"), between("a", min_value=2)))
    >>> found = evaluate(pa.table({"a": [1, None]}), target)
    >>> [(f.success, f.unexpected_count, f.rows) for f in found]
    [(False, 1, (1,)), (False, 1, (0,))]
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import polars as pl
import pyarrow as pa

from mpg.quality.declare import ARROW_TYPE, NOT_NULL, Expect, Target

# Mpg's own types, which Great Expectations is never asked about (see above).
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


def _missing(frame: pl.DataFrame, column: str) -> pl.Expr:
    """Missing as GX's pandas engine reads it: null, or NaN in a float column."""
    if frame.schema[column].is_float():
        return pl.col(column).is_null() | pl.col(column).is_nan()
    return pl.col(column).is_null()


def _dropped(frame: pl.DataFrame, columns: Sequence[str], how: str) -> pl.Expr:
    """Rows GX leaves out of a multi-column domain (`ignore_row_if`)."""
    missing = [_missing(frame, c) for c in columns]
    if how in ("either_value_is_missing", "any_value_is_missing"):
        return pl.any_horizontal(missing)
    if how in ("both_values_are_missing", "all_values_are_missing"):
        return pl.all_horizontal(missing)
    if how in ("neither", "never"):
        return pl.lit(False)
    raise ValueError(f"ignore_row_if={how!r} is not a Great Expectations option")


def _between(frame: pl.DataFrame, kw: dict) -> pl.Expr:
    value, low, high = pl.col(str(kw["column"])), kw.get("min_value"), kw.get("max_value")
    inside = pl.lit(True)
    if low is not None:
        inside &= value > low if kw.get("strict_min") else value >= low
    if high is not None:
        inside &= value < high if kw.get("strict_max") else value <= high
    return ~_missing(frame, str(kw["column"])) & ~inside


def _in_set(frame: pl.DataFrame, kw: dict) -> pl.Expr:
    column = str(kw["column"])
    values = pl.Series(list(kw["value_set"]), dtype=frame.schema[column])  # type: ignore[arg-type]
    return ~_missing(frame, column) & ~pl.col(column).is_in(values.implode())


def _lengths(frame: pl.DataFrame, kw: dict) -> pl.Expr:
    column = str(kw["column"])
    length, low, high = pl.col(column).str.len_chars(), kw.get("min_value"), kw.get("max_value")
    inside = pl.lit(True)
    if low is not None:
        inside &= length >= low
    if high is not None:
        inside &= length <= high
    return ~_missing(frame, column) & ~inside


def _pair_greater(frame: pl.DataFrame, kw: dict) -> pl.Expr:
    a, b = pl.col(str(kw["column_A"])), pl.col(str(kw["column_B"]))
    ordered = a >= b if kw.get("or_equal") else a > b
    dropped = _dropped(frame, (str(kw["column_A"]), str(kw["column_B"])), str(kw["ignore_row_if"]))
    return ~dropped & ~ordered


def _compound_unique(frame: pl.DataFrame, kw: dict) -> pl.Expr:
    columns = [str(c) for c in kw["column_list"]]  # type: ignore[attr-defined]
    dropped = _dropped(frame, columns, str(kw["ignore_row_if"]))
    # A dropped row repeats only rows that are dropped too (the same values missing), so
    # counting copies over every row counts them within the domain.
    return ~dropped & pl.struct(columns).is_duplicated()


_UNEXPECTED: dict[str, Callable[[pl.DataFrame, dict], pl.Expr]] = {
    "expect_column_values_to_be_between": _between,
    "expect_column_values_to_be_in_set": _in_set,
    "expect_column_value_lengths_to_be_between": _lengths,
    "expect_column_pair_values_a_to_be_greater_than_b": _pair_greater,
    "expect_compound_columns_to_be_unique": _compound_unique,
}
# What each type reads (other keys of a declaration would change its meaning here).
_ARGUMENTS = {
    "expect_column_values_to_be_between": {"column", "min_value", "max_value", "strict_min"},
    "expect_column_values_to_be_in_set": {"column", "value_set"},
    "expect_column_value_lengths_to_be_between": {"column", "min_value", "max_value"},
    "expect_column_pair_values_a_to_be_greater_than_b": {
        "column_A", "column_B", "or_equal", "ignore_row_if",
    },
    "expect_compound_columns_to_be_unique": {"column_list", "ignore_row_if"},
    NOT_NULL: {"column"},
    ARROW_TYPE: {"column", "type_"},
}  # fmt: skip


def supported(expect: Expect) -> None:
    """Raise ValueError for an expectation this module cannot evaluate as GX would."""
    known = _ARGUMENTS.get(expect.expectation)
    if known is None:
        raise ValueError(f"{expect.expectation} is not evaluated by mpg.quality.arrow_checks")
    if set(expect.kwargs) - known:
        raise ValueError(f"{expect.expectation}: arguments {sorted(set(expect.kwargs) - known)}")


def _unexpected(frame: pl.DataFrame, expect: Expect) -> tuple[pl.Expr, pl.Expr | None]:
    """The expectation's unexpected rows, and for a conditioned not-null the rows it applies to
    (its element count; else None: every row)."""
    if expect.expectation != NOT_NULL:
        return _UNEXPECTED[expect.expectation](frame, expect.kwargs), None
    nulls = pl.col(str(expect.kwargs["column"])).is_null()
    if expect.when is None:
        return nulls, None
    applies = pl.col(expect.when[0]).is_in(pl.Series(list(expect.when[1])).implode())
    applies = applies.fill_null(False)
    return nulls & applies, applies


def _type_found(frame: pa.Table, expect: Expect) -> Finding:
    column = str(expect.kwargs["column"])
    actual = str(frame.schema.field(column).type) if column in frame.column_names else "missing"
    return Finding(actual == expect.kwargs["type_"], frame.num_rows, observed=actual)


def _error(rows: int, error: Exception) -> Finding:
    return Finding(False, rows, observed=f"error: {error}")


def evaluate(frame: pa.Table, target: Target) -> list[Finding]:
    """Every expectation of `target` on `frame` (in any order), in declared order."""
    data = pl.from_arrow(frame)
    assert isinstance(data, pl.DataFrame)
    rows = frame.num_rows
    found: dict[int, Finding] = {}
    counted: dict[int, tuple[pl.Expr, pl.Expr | None]] = {}
    for i, expect in enumerate(target.expectations):
        if expect.expectation == ARROW_TYPE:
            found[i] = _type_found(frame, expect)
        elif missing := [c for c in expect.columns if c not in data.columns]:
            found[i] = _error(rows, KeyError(f"no column {missing[0]}"))
        else:
            try:
                counted[i] = _unexpected(data, expect)
            except (pl.exceptions.PolarsError, TypeError, ValueError) as error:
                found[i] = _error(rows, error)
    sums = _counts(data, counted)
    for i, (unexpected, applies) in counted.items():
        if isinstance(sums[i], Exception):
            found[i] = _error(rows, sums[i])  # type: ignore[arg-type]
            continue
        count, checked = sums[i]  # type: ignore[misc]
        first = () if count == 0 else _first_rows(data, target.index, unexpected)
        found[i] = Finding(count == 0, rows if applies is None else checked, count, first)
    return [found[i] for i in range(len(target.expectations))]


def _counts(
    data: pl.DataFrame, counted: dict[int, tuple[pl.Expr, pl.Expr | None]]
) -> dict[int, tuple[int, int] | Exception]:
    """(unexpected rows, rows it applies to) per expectation, all in one pass over `data`; one
    by one only where the pass fails (an expectation that cannot be computed on this frame)."""

    def exprs(i: int) -> list[pl.Expr]:
        unexpected, applies = counted[i]
        return [
            unexpected.sum().cast(pl.Int64).alias(f"u{i}"),
            (pl.len() if applies is None else applies.sum()).cast(pl.Int64).alias(f"n{i}"),
        ]

    try:
        row = data.select(*(e for i in counted for e in exprs(i))).row(0, named=True)
        return {i: (row[f"u{i}"], row[f"n{i}"]) for i in counted}
    except pl.exceptions.PolarsError:
        pass
    sums: dict[int, tuple[int, int] | Exception] = {}
    for i in counted:
        try:
            one = data.select(*exprs(i)).row(0, named=True)
            sums[i] = (one[f"u{i}"], one[f"n{i}"])
        except pl.exceptions.PolarsError as error:
            sums[i] = error
    return sums


def _first_rows(data: pl.DataFrame, index: Sequence[str], unexpected: pl.Expr) -> tuple[int, ...]:
    """The positions of the first SAMPLE_SIZE unexpected rows by `index` (NULLs first, ties in
    frame order)."""
    found = data.with_row_index("_position").filter(unexpected)
    order = [c for c in index if c in data.columns]
    if order:
        found = found.sort(order, nulls_last=False, maintain_order=True)
    return tuple(found.get_column("_position").head(SAMPLE_SIZE).to_list())
