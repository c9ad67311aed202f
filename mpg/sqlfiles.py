"""Loads SQL statements from the `sql/` folder (installed as `mpg.sql`).

SQL lives only in files, one statement each (the `macros.sql` files and
`publish/current_views.sql` excepted), with named parameters bound at execution: nothing here
formats values into query text (the `*_current` views' version, which DuckDB cannot bind in a
view, is inlined by `mpg.pipelines.publish.current_views_sql`).

    >>> "with" in load_sql("parse/runtime.sql")
    True
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_sql(name: str) -> str:
    return resources.files("mpg.sql").joinpath(name).read_text(encoding="utf-8")
