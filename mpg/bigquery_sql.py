"""The DuckDB-only parts of the user-facing SQL, rewritten in the parsed statement for BigQuery.

sqlglot transpiles most of DuckDB's dialect (FILTER, EXCLUDE, VALUES, NULLS FIRST). Four things
it does not, which the analysts' views (sql/views/) use:

- **macros**: DuckDB's `mpg_ratio`, `mpg_goodput_ratios` and `mpg_profiled_sum`
  (sql/publish/macros.sql, their one definition) have no BigQuery counterpart a view could call
  without a UDF per dataset (and an aggregate UDF for `mpg_profiled_sum`). So each call is
  replaced by the macro's body with its arguments put in place of its parameters: inlined.
- **`unnest(struct)` in a select list**, which DuckDB turns into one column per field: replaced by
  the struct's fields as aliased columns (what `unnest(mpg_goodput_ratios(...))` means).
- **`GROUP BY x, CUBE (a, b)`**: BigQuery's grammar takes GROUP BY CUBE, ROLLUP or GROUPING SETS as
  the whole GROUP BY, not beside plain columns; so a mixed one is spelled out as its grouping
  sets, each with the plain columns: `GROUPING SETS ((x, a, b), (x, a), (x, b), (x))`.
- **`any_value(x)`**, which sqlglot writes `ANY_VALUE(x IGNORE NULLS)` (DuckDB's skips NULLs):
  BigQuery's ANY_VALUE takes no IGNORE NULLS clause and skips NULLs by itself, so it is dropped.

    >>> statement = sqlglot.parse_one(
    ...     "select day, unnest(struct_pack(share := mpg_ratio(a, b))) from t "
    ...     "group by day, cube (c)", read="duckdb")
    >>> for_bigquery(statement).sql("bigquery")
    'SELECT day, CASE WHEN (b) > 0 THEN (a) / (b) END AS share FROM t GROUP BY GROUPING SETS ((day, c), (day))'
"""  # noqa: E501

from __future__ import annotations

import itertools
from functools import cache

import sqlglot
from sqlglot import exp

from mpg.sqlfiles import load_sql

MACROS_FILE = "publish/macros.sql"


@cache
def _macros() -> dict[str, tuple[tuple[str, ...], exp.Expression]]:
    """Each macro of MACROS_FILE: its parameters and its body, by lower-case name."""
    found = {}
    for statement in sqlglot.parse(load_sql(MACROS_FILE), read="duckdb"):
        assert isinstance(statement, exp.Create) and statement.kind == "MACRO", statement
        signature = statement.this
        params = tuple(p.name for p in signature.expressions)
        found[signature.this.name.lower()] = (params, statement.expression)
    return found


def _inline(node: exp.Expression) -> exp.Expression:
    """A call of a macro as its body, the arguments (parenthesised) in place of the parameters;
    macros the body calls are inlined in turn."""
    if not isinstance(node, exp.Anonymous) or node.name.lower() not in _macros():
        return node
    params, body = _macros()[node.name.lower()]
    if len(params) != len(node.expressions):
        raise ValueError(f"{node.name} takes {len(params)} arguments: {node.sql('duckdb')}")
    args = dict(zip(params, node.expressions, strict=True))

    def put(part: exp.Expression) -> exp.Expression:
        if isinstance(part, exp.Column) and not part.table and part.name in args:
            return exp.paren(args[part.name].copy(), copy=False)
        return part

    return body.copy().transform(put).transform(_inline)


def _struct_columns(select: exp.Expression) -> exp.Expression:
    """`unnest(struct_pack(k := v, ...))` in a select list as the columns `v AS k, ...`."""
    if not isinstance(select, exp.Select):
        return select
    columns: list[exp.Expression] = []
    for item in select.expressions:
        struct = item.this if isinstance(item, exp.Explode) else None
        if isinstance(struct, exp.Struct):
            for field in struct.expressions:
                if not isinstance(field, exp.PropertyEQ):
                    raise ValueError(f"a struct field without a name: {field.sql('duckdb')}")
                columns.append(exp.alias_(field.expression, field.this.name))
        else:
            columns.append(item)
    select.set("expressions", columns)
    return select


def _cube_as_grouping_sets(group: exp.Expression) -> exp.Expression:
    """`GROUP BY x, CUBE (a, b)` as the same groups in GROUPING SETS; a GROUP BY that is only a
    CUBE stays as it is."""
    if not isinstance(group, exp.Group):
        return group
    cubes = [e for e in group.expressions if isinstance(e, exp.Cube)]
    plain = [e for e in group.expressions if not isinstance(e, exp.Cube)]
    if not cubes or not plain:
        return group
    if len(cubes) > 1 or any(not isinstance(e, exp.Column) for e in plain):
        raise ValueError(f"only columns beside one CUBE are spelled out: {group.sql('duckdb')}")
    dimensions = cubes[0].expressions
    sets = [
        exp.Tuple(expressions=[e.copy() for e in (*plain, *kept)])
        for size in range(len(dimensions), -1, -1)
        for kept in itertools.combinations(dimensions, size)
    ]
    return exp.Group(expressions=[exp.GroupingSets(expressions=sets)])


def _plain_any_value(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
        return node.this
    return node


def for_bigquery(statement: exp.Expression) -> exp.Expression:
    """`statement` (parsed from DuckDB's dialect) with macros inlined, struct unnests as columns,
    mixed cubes as grouping sets and a plain ANY_VALUE: ready to be written in BigQuery's
    dialect."""
    inlined = statement.transform(_inline)
    return (
        inlined.transform(_struct_columns)
        .transform(_cube_as_grouping_sets)
        .transform(_plain_any_value)
    )
