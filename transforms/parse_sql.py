"""The parse statements (`sql/parse/`), with their field lists made from the trace format's one
declaration (`mpg.schemas.TRACE_FIELDS` and the record schemas' types).

A statement names what only it decides (its checks, which records carry a field) and leaves
each list that follows from the fields to a placeholder, `{{ name }}`, filled here once per
parser (a statement is prepared once and run for every block, so rendering costs nothing per
block). Every value is still bound as a parameter: only field names and their JSON types are
written in. The placeholders:

- `{{ fields }}`: the relation a statement starts from, a row per line: for the full rule set,
  each field as a JSON value (`mpg_json_objects`) and its facts, once (its kind; its string,
  integer or number; an integer's JSON text; an instant's text), as `sql/parse/macros.sql`
  describes them; for the fast path, each field typed straight away (`mpg_json_typed`);
- `{{ as_written }}`: the text json.dumps writes for the values a line was read as
  (`mpg_written_as`);
- `{{ record }}`: the statement's typed record, `sql/parse/<source>_record.sql` (which fields each
  kind of record carries), the same in both statements of a source.

The fast path ends with every line and its `ordinary` flag, never `WHERE ordinary`: DuckDB pushes
such a filter below the projections, parsing each line once per field it reads (8x slower,
measured); BlockParser keeps the ordinary rows.

    >>> "{{" in parse_statement("runtime"), "{{" in parse_statement("runtime", ordinary=True)
    (False, False)
"""

from __future__ import annotations

import re

import pyarrow as pa

from mpg.schemas import RECORD_SCHEMAS, TIME_FIELDS, TRACE_FIELDS
from mpg.sql.files import load_sql

# Fields the fast path leaves to the full rules: a line that names one is not ordinary. A rank is
# rare (multi-process traces) and read on step spans only.
FULL_RULES_ONLY: dict[str, frozenset[str]] = {"runtime": frozenset({"rank"})}

_PLACEHOLDER = re.compile(r"\{\{ (\w+) \}\}")


def parse_statement(source: str, ordinary: bool = False) -> str:
    """`sql/parse/<source>.sql` (the full rule set) or `<source>_ordinary.sql` (the fast path),
    its placeholders filled."""
    name = f"parse/{source}_ordinary.sql" if ordinary else f"parse/{source}.sql"
    fields = [
        RECORD_SCHEMAS[source].field(n)
        for n in TRACE_FIELDS[source]
        if not (ordinary and n in FULL_RULES_ONLY.get(source, ()))
    ]
    fragments = {
        "fields": _full_fields(fields) if not ordinary else _typed_fields(fields),
        "as_written": _as_written(fields),
        "record": _record(source),
    }
    text = load_sql(name)

    def fill(match: re.Match[str]) -> str:
        indent = " " * (match.start() - text.rfind("\n", 0, match.start()) - 1)
        return fragments[match.group(1)].replace("\n", "\n" + indent)

    return _PLACEHOLDER.sub(fill, text)


def _kind(field: pa.Field) -> str:
    if field.name in TIME_FIELDS:
        return "time"
    if pa.types.is_string(field.type):
        return "string"
    return "integer" if pa.types.is_integer(field.type) else "number"


def _shape(types: dict[str, str]) -> str:
    """A `json_transform` structure, as a SQL string literal."""
    return "'{" + ", ".join(f'"{name}": "{type_}"' for name, type_ in types.items()) + "}'"


def _full_fields(fields: list[pa.Field]) -> str:
    """Each line's fields as JSON values (`mpg_json_objects`), and each field's facts, once: its
    kind; its string, integer or number; an integer's JSON text; an instant's text."""
    facts = []
    for field in fields:
        value, name = f'j."{field.name}"', field.name
        kind = f'mpg_kind({value}) as "{name}_kind"'
        facts.append(
            {
                "string": f'{kind}, mpg_str({value}) as "{name}"',
                "time": f'{kind}, mpg_str({value}) as "{name}_text"',
                "integer": f'{value} as "{name}_json", {kind}, mpg_int({value}) as "{name}"',
                "number": f'{kind}, mpg_num({value}) as "{name}"',
            }[_kind(field)]
        )
    shape = _shape({f.name: "JSON" for f in fields})
    return _select(["line", "raw", "line_problem", *facts], f"mpg_json_objects('lines', {shape})")


def _typed_fields(fields: list[pa.Field]) -> str:
    """Each line's fields typed straight away (`mpg_json_typed`); an instant as its text and its
    value (`mpg_ts_upper`: written in upper case, as exporters write it)."""
    columns = []
    for field in fields:
        value, name = f'j."{field.name}"', field.name
        if _kind(field) == "time":
            columns.append(f'{value} as "{name}_text", mpg_ts_upper({value}) as "{name}"')
        else:
            columns.append(value)
    types = {"string": "VARCHAR", "time": "VARCHAR", "integer": "BIGINT", "number": "DOUBLE"}
    shape = _shape({f.name: types[_kind(f)] for f in fields})
    return _select(["line", "raw", *columns], f"mpg_json_typed('lines', {shape})")


def _select(columns: list[str], relation: str) -> str:
    return "select\n    " + ",\n    ".join(columns) + f"\nfrom {relation}"


def _as_written(fields: list[pa.Field]) -> str:
    """Each field as json.dumps writes it, in the spec's order: a required one's key always (a
    line without it is not ordinary), an optional one's only where it has a value (NULL drops
    the piece, key and all). One `concat` of few pieces, text runs joined: this runs on every
    line."""
    pieces: list[str] = ["{"]  # text, or an expression in parentheses
    for i, field in enumerate(fields):
        kind = _kind(field)
        column = f'"{field.name}_text"' if kind == "time" else f'"{field.name}"'
        quote = '"' if kind in ("string", "time") else ""
        key = f'{", " if i else ""}"{field.name}": {quote}'
        if field.nullable:
            pieces.append(f"('{key}' || {column}" + (f" || '{quote}')" if quote else ")"))
        else:
            pieces += [key, f"({column})", quote]
    pieces.append("}")
    joined: list[str] = []
    for piece in filter(None, pieces):
        if joined and not piece.startswith("(") and not joined[-1].startswith("("):
            joined[-1] += piece
        else:
            joined.append(piece)
    sql = (p[1:-1] if p.startswith("(") else f"'{p}'" for p in joined)
    return "concat(" + ", ".join(sql) + ")"


def _record(source: str) -> str:
    """The select list of `<source>_record.sql`, its comment lines left out."""
    lines = load_sql(f"parse/{source}_record.sql").splitlines()
    return "\n".join(line for line in lines if not line.startswith("--")).strip()
