"""How a suite is declared: plain frozen data, so suites are versioned code that imports nothing
heavy, and the report and tests can read them without starting Great Expectations.

An `Expect` names a Great Expectations expectation type and its arguments, plus what a failure
means (`severity`) and a sentence for the report. `Target` groups the expectations checked on one
frame (a source's records, a published table, a reconciliation frame from `sql/quality/`), and
`Suite` groups targets under one name and version.

    >>> between("attempt", min_value=0).description
    'attempt >= 0'
    >>> at_least("end", "start").expectation
    'expect_column_pair_values_a_to_be_greater_than_b'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import pyarrow as pa

# "fail": the run fails and the previous tables stay published; "warn": recorded and reported.
Severity = Literal["fail", "warn"]

# The two expectation types mpg evaluates itself on the Arrow table (mpg.quality.arrow_checks);
# only they take a row condition (`when`): GX's costs ~20 ms per conditioned expectation.
ARROW_TYPE = "expect_column_type_to_be"
NOT_NULL = "expect_column_values_to_not_be_null"


@dataclass(frozen=True)
class Expect:
    """One promise about a frame: a GX expectation type with its arguments.

    `when` restricts it to the rows whose `when[0]` column is one of `when[1]` (what GX calls a
    row condition; mpg evaluates it), e.g. "chips is not null where type is TASK_SCHEDULE".
    """

    expectation: str
    kwargs: dict[str, object]
    description: str
    severity: Severity = "fail"
    when: tuple[str, tuple[str, ...]] | None = None

    def __post_init__(self) -> None:
        if self.when is not None and self.expectation != NOT_NULL:
            raise ValueError(f"only {NOT_NULL} takes a row condition, not {self.expectation}")

    @property
    def columns(self) -> tuple[str, ...]:
        """The frame's columns this expectation reads (the values shown in a sample)."""
        kw = self.kwargs
        if "column" in kw:
            return (str(kw["column"]),)
        if "column_list" in kw:
            return tuple(str(c) for c in kw["column_list"])  # type: ignore[attr-defined]
        return tuple(str(kw[k]) for k in ("column_A", "column_B") if k in kw)


@dataclass(frozen=True)
class Target:
    """The expectations on one frame; `index` names a row of it in samples (and orders it)."""

    name: str
    index: tuple[str, ...]
    expectations: tuple[Expect, ...]


@dataclass(frozen=True)
class Suite:
    name: str
    version: str
    targets: tuple[Target, ...]


def _where(when: tuple[str, tuple[str, ...]] | None) -> str:
    return f" where {when[0]} in ({', '.join(when[1])})" if when else ""


def with_severity(expectations: Sequence[Expect], severity: Severity) -> tuple[Expect, ...]:
    """The same expectations with another severity (a suite's default)."""
    return tuple(replace(e, severity=severity) for e in expectations)


def arrow_type(column: str, type_: pa.DataType) -> Expect:
    return Expect(ARROW_TYPE, {"column": column, "type_": str(type_)}, f"{column} is {type_}")


def not_null(
    column: str,
    when: tuple[str, tuple[str, ...]] | None = None,
    description: str | None = None,
) -> Expect:
    return Expect(
        NOT_NULL,
        {"column": column},
        description or f"{column} is not null{_where(when)}",
        when=when,
    )


def between(
    column: str,
    min_value: float | None = None,
    max_value: float | None = None,
    *,
    strict_min: bool = False,
    severity: Severity = "fail",
    description: str | None = None,
) -> Expect:
    """min <= column <= max (either bound may be open); nulls are not checked."""
    kwargs: dict[str, object] = {"column": column}
    bounds = []
    if min_value is not None:
        kwargs["min_value"] = min_value
        bounds.append(f"{column} {'>' if strict_min else '>='} {min_value:g}")
    if strict_min:
        kwargs["strict_min"] = True
    if max_value is not None:
        kwargs["max_value"] = max_value
        bounds.append(f"{column} <= {max_value:g}")
    text = " and ".join(bounds)
    if min_value is not None and max_value is not None and not strict_min:
        text = f"{column} within [{min_value:g}, {max_value:g}]"
    return Expect("expect_column_values_to_be_between", kwargs, description or text, severity)


def in_set(column: str, values: Sequence[str], what: str) -> Expect:
    return Expect(
        "expect_column_values_to_be_in_set",
        {"column": column, "value_set": list(values)},
        f"{column} is one of the {what}",
    )


def unique(*columns: str, skip_nulls: bool = False, description: str | None = None) -> Expect:
    """No two rows share these columns' values (NULL counts as a value, unless `skip_nulls`:
    then rows where any of them is NULL are not checked)."""
    return Expect(
        "expect_compound_columns_to_be_unique",
        {
            "column_list": list(columns),
            "ignore_row_if": "any_value_is_missing" if skip_nulls else "all_values_are_missing",
        },
        description or f"({', '.join(columns)}) is unique",
    )


def non_empty(column: str) -> Expect:
    return Expect(
        "expect_column_value_lengths_to_be_between",
        {"column": column, "min_value": 1},
        f"{column} is not empty",
    )


def at_least(column_a: str, column_b: str, description: str | None = None) -> Expect:
    """column_a >= column_b on every row where both are set."""
    return Expect(
        "expect_column_pair_values_a_to_be_greater_than_b",
        {
            "column_A": column_a,
            "column_B": column_b,
            "or_equal": True,
            "ignore_row_if": "either_value_is_missing",
        },
        description or f"{column_a} >= {column_b}",
    )
