"""Every statement mpg runs, one a file, in folders by who runs it (`parse/`, `publish/`,
`semantic/`, `views/`, `report/`, `compare/`, `explain/`, `quality/`, `crosscheck/`, `bigquery/`);
and the two modules that read them: `files` (load, bind, render for DuckDB or BigQuery, create
the semantic layer's macros) and `bigquery_dialect` (what sqlglot does not rewrite for BigQuery).
Installed as `mpg.sql`."""
