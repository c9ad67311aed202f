"""The DuckDB-only parts of the user-facing SQL, rewritten in the parsed statement for BigQuery.

sqlglot transpiles most of DuckDB's dialect (FILTER, EXCLUDE, VALUES, NULLS FIRST). Five things
it does not, which the analysts' views (sql/views/) use, and one it should not:

- **macros**: DuckDB's `mpg_ratio`, `mpg_goodput_ratios` and `mpg_profiled_sum`
  (sql/publish/macros.sql, their one definition) have no BigQuery counterpart a view could call
  without a UDF per dataset (and an aggregate UDF for `mpg_profiled_sum`). So each call is
  replaced by the macro's body with its arguments put in place of its parameters: inlined.
- **a row as an argument** (`mpg_job_day_sums(facts)`, DuckDB's row of `facts` as a struct):
  the macro's `f.x` becomes the column `facts.x` when the body is inlined.
- **`unnest(struct)` in a select list**, which DuckDB turns into one column per field: replaced by
  the struct's fields as aliased columns (what `unnest(mpg_goodput_ratios(...))` means).
- **`GROUP BY x, CUBE (a, b)`**: BigQuery's grammar takes GROUP BY CUBE, ROLLUP or GROUPING SETS as
  the whole GROUP BY, not beside plain columns; so a mixed one is spelled out as its grouping
  sets, each with the plain columns: `GROUPING SETS ((x, a, b), (x, a), (x, b), (x))`.
- **`any_value(x)`**, which sqlglot writes `ANY_VALUE(x IGNORE NULLS)` (DuckDB's skips NULLs):
  BigQuery's ANY_VALUE takes no IGNORE NULLS clause and skips NULLs by itself, so it is dropped.
- **`mpg_exact(x)`**, an amount as a DECIMAL(38, 9) so that DuckDB's sums of it are exact and in
  no order, is `x` itself in BigQuery: BigQuery sums FLOAT64 in its own order (and its emulator
  cannot keep a NUMERIC's scale in a view: it rounds to thousandths).

    >>> statement = sqlglot.parse_one(
    ...     "select day, unnest(struct_pack(share := mpg_ratio(a, b))) from t "
    ...     "group by day, cube (c)", read="duckdb")
    >>> for_bigquery(statement).sql("bigquery")
    'SELECT day, CASE WHEN (b) > 0 THEN (a) / (b) END AS share FROM t GROUP BY GROUPING SETS ((day, c), (day))'
"""  # noqa: E501

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import sqlglot
from sqlglot import exp

from mpg.sql.files import MACRO_FILES, macro_sql

# The view naming the current metric version (sql/publish/current_version.sql).
CURRENT_VERSION_VIEW = "current_metric_version"


@dataclass(frozen=True)
class _Macro:
    params: tuple[str, ...]
    body: exp.Expression
    table: bool  # a table macro (AS TABLE), called in a FROM


@cache
def _macros() -> dict[str, _Macro]:
    """Each macro of the layer's files (MACRO_FILES), by lower-case name."""
    found = {}
    for name in MACRO_FILES:
        for statement in sqlglot.parse(macro_sql(name), read="duckdb"):
            assert isinstance(statement, exp.Create) and statement.kind == "MACRO", statement
            signature = statement.this
            params = tuple(p.name for p in signature.expressions)
            table = isinstance(statement.expression, exp.Query)
            found[signature.this.name.lower()] = _Macro(params, statement.expression, table)
    return found


def _called(node: exp.Expression, table: bool) -> tuple[_Macro, dict[str, exp.Expression]] | None:
    """The macro `node` calls (an anonymous function of the layer's, of the kind asked for)
    and its arguments by parameter name; None for anything else."""
    if not isinstance(node, exp.Anonymous):
        return None
    macro = _macros().get(node.name.lower())
    if macro is None or macro.table != table:
        return None
    if len(macro.params) != len(node.expressions):
        raise ValueError(f"{node.name} takes {len(macro.params)} arguments: {node.sql('duckdb')}")
    return macro, dict(zip(macro.params, node.expressions, strict=True))


def _body(macro: _Macro, args: dict[str, exp.Expression]) -> exp.Expression:
    """A macro's body with the arguments (parenthesised) in place of its parameters."""

    def put(part: exp.Expression) -> exp.Expression:
        if isinstance(part, exp.Column) and not part.table and part.name in args:
            return exp.paren(args[part.name].copy(), copy=False)
        if isinstance(part, exp.Column) and part.table in args:  # a field of a row argument
            row = args[part.table]
            if not isinstance(row, exp.Column) or row.table:
                raise ValueError(f"a row argument is a table's name: {row.sql('duckdb')}")
            return exp.column(part.name, table=row.name)
        return part

    return macro.body.copy().transform(put)


# Macros that are their one argument in BigQuery (see the module's docstring).
_AS_IS = frozenset({"mpg_exact"})


def _inline(node: exp.Expression) -> exp.Expression:
    """A call of a scalar macro as its body; macros the body calls are inlined in turn."""
    called = _called(node, table=False)
    if called is None:
        return node
    if node.name.lower() in _AS_IS:
        (argument,) = called[1].values()
        return exp.paren(argument.copy(), copy=False).transform(_inline)
    return _body(*called).transform(_inline)


# The layer's facts for the current metric version are a view of their own (sql/views/
# job_day_facts.sql); in BigQuery another view reads that view rather than repeating the facts'
# body (their CTEs, joins and forty sums) inside every roll-up: one definition, a third of the
# statements' size.
FACTS_MACRO, FACTS_VIEW = "mpg_job_days", "job_day_facts"
_FACTS_OF_A_PERIOD = (
    f"select * from {FACTS_VIEW} "
    "where (p_first is null or day >= p_first) and (p_last is null or day <= p_last)"
)


def _of_the_current_version(argument: exp.Expression) -> bool:
    """`(select metric_version from current_metric_version)`: how views name the version."""
    query = argument.unnest()
    while isinstance(query, exp.Subquery):
        query = query.this.unnest()
    return isinstance(query, exp.Select) and any(
        t.name == CURRENT_VERSION_VIEW for t in query.find_all(exp.Table)
    )


def _inline_table(node: exp.Expression, facts_view: bool = True) -> exp.Expression:
    """A table macro in a FROM (`from mpg_rollup(...) as r`) as a subquery of its body, aliased
    as the call was (or by the macro's name), without its ORDER BY (a subquery's rows have no
    order); table macros the body calls are inlined in turn. Where `facts_view`, the facts of
    the current version read FACTS_VIEW."""
    if not isinstance(node, exp.Table):
        return node
    called = _called(node.this, table=True)
    if called is None:
        return node
    macro, args = called
    if (
        facts_view
        and node.this.name.lower() == FACTS_MACRO
        and _of_the_current_version(args["p_version"])
    ):
        body = _body(_Macro(macro.params, sqlglot.parse_one(_FACTS_OF_A_PERIOD), True), args)
    else:
        body = _body(macro, args).transform(lambda n: _inline_table(n, facts_view))
    body.set("order", None)
    alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.this.name))
    return exp.Subquery(this=body, alias=alias.copy())


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


def _sets(item: exp.Expression) -> list[list[exp.Expression]]:
    """The grouping sets a GROUP BY item stands for: a CUBE's every subset (largest first), a
    GROUPING SETS' sets (a CUBE in it spelled out too), a tuple, a column in parentheses or a
    column one set."""
    if isinstance(item, exp.Cube):
        dimensions = item.expressions
        return [
            list(kept)
            for size in range(len(dimensions), -1, -1)
            for kept in itertools.combinations(dimensions, size)
        ]
    if isinstance(item, exp.GroupingSets):
        return [found for part in item.expressions for found in _sets(part)]
    if isinstance(item, exp.Tuple):
        return [list(item.expressions)]
    if isinstance(item, exp.Paren):  # `(team)`: a set of one column
        return [[item.this]]
    return [[item]]


def _cube_as_grouping_sets(group: exp.Expression) -> exp.Expression:
    """`GROUP BY x, CUBE (a, b)` (or `x, GROUPING SETS (CUBE (a, b), (c))`) as the same groups
    in one GROUPING SETS, each with the plain columns; a GROUP BY that is only a CUBE stays."""
    if not isinstance(group, exp.Group):
        return group
    sets_of = [e for e in group.expressions if isinstance(e, exp.Cube | exp.GroupingSets)]
    plain = [e for e in group.expressions if not isinstance(e, exp.Cube | exp.GroupingSets)]
    if not sets_of or not plain:
        return group
    if len(sets_of) > 1 or any(not isinstance(e, exp.Column) for e in plain):
        raise ValueError(f"only columns beside one CUBE are spelled out: {group.sql('duckdb')}")
    sets = [
        exp.Tuple(expressions=[e.copy() for e in (*plain, *kept)]) for kept in _sets(sets_of[0])
    ]
    return exp.Group(expressions=[exp.GroupingSets(expressions=sets)])


def _plain_any_value(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
        return node.this
    return node


def for_bigquery(statement: exp.Expression, facts_view: bool = True) -> exp.Expression:
    """`statement` (parsed from DuckDB's dialect) with macros inlined (the current version's
    facts read from FACTS_VIEW, unless `facts_view` is False: in that view itself), struct
    unnests as columns, mixed cubes as grouping sets and a plain ANY_VALUE: ready to be written
    in BigQuery's dialect."""
    inlined = statement.transform(lambda n: _inline_table(n, facts_view)).transform(_inline)
    return (
        inlined.transform(_struct_columns)
        .transform(_cube_as_grouping_sets)
        .transform(_plain_any_value)
    )
