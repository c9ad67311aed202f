-- Field checks shared by the three parse queries (sql/parse/*.sql).
-- The only file here with more than one statement: DuckDB declares one macro per statement, and
-- these belong together. Each *_problem macro returns the reason a JSON value cannot be used as
-- that field, or NULL when it can; each typed macro returns the value once it passed its check.
-- A JSON null counts as a missing field.

-- The kind of a JSON value, from its text: a value is one token, so its first character decides,
-- and an integer is all digits. (json_type would parse every value again, several times slower.)
CREATE OR REPLACE TEMP MACRO mpg_kind(v) AS
    CASE left(CAST(v AS VARCHAR), 1)
        WHEN '"' THEN 'string'
        WHEN 'n' THEN 'null'
        WHEN 't' THEN 'boolean'
        WHEN 'f' THEN 'boolean'
        WHEN '{' THEN 'object'
        WHEN '[' THEN 'array'
        ELSE CASE WHEN regexp_full_match(CAST(v AS VARCHAR), '-?[0-9]+') THEN 'integer'
                  ELSE 'number' END
    END;

CREATE OR REPLACE TEMP MACRO mpg_str(v) AS json_extract_string(v, '$');
CREATE OR REPLACE TEMP MACRO mpg_int(v) AS TRY_CAST(v AS BIGINT);
CREATE OR REPLACE TEMP MACRO mpg_num(v) AS TRY_CAST(v AS DOUBLE);
-- RFC 3339 allows lower-case 't' and 'z', which DuckDB's cast does not: upper-case first.
CREATE OR REPLACE TEMP MACRO mpg_ts(v) AS TRY_CAST(upper(json_extract_string(v, '$')) AS TIMESTAMPTZ);

CREATE OR REPLACE TEMP MACRO mpg_missing(name, v) AS
    CASE WHEN v IS NULL OR mpg_kind(v) = 'null' THEN 'missing field: ' || name END;

CREATE OR REPLACE TEMP MACRO mpg_str_problem(name, v) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) <> 'string' THEN 'wrong type: ' || name || ' must be a string'
             WHEN json_extract_string(v, '$') = '' THEN 'out of range: ' || name || ' is empty'
        END);

CREATE OR REPLACE TEMP MACRO mpg_int_problem(name, v) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) <> 'integer'
                 THEN 'wrong type: ' || name || ' must be an integer'
             WHEN TRY_CAST(v AS BIGINT) IS NULL
                 THEN 'out of range: ' || name || ' does not fit in 64 bits'
        END);

CREATE OR REPLACE TEMP MACRO mpg_num_problem(name, v) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) NOT IN ('integer', 'number')
                 THEN 'wrong type: ' || name || ' must be a number'
             WHEN NOT isfinite(TRY_CAST(v AS DOUBLE))
                 THEN 'out of range: ' || name || ' is not finite'
        END);

-- RFC 3339 only: a date, 'T' (or a space), a time with optional fraction, and 'Z' or an offset.
-- DuckDB alone would also take a missing offset or hour 24; the pattern rules those out first.
CREATE OR REPLACE TEMP MACRO mpg_ts_problem(name, v) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) <> 'string' THEN 'wrong type: ' || name || ' must be an RFC 3339 string'
             WHEN NOT regexp_full_match(json_extract_string(v, '$'),
                     '\d{4}-\d{2}-\d{2}[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)')
                  OR mpg_ts(v) IS NULL
                 THEN 'unparseable time: ' || name
        END);

-- An optional field: absent or null is fine, anything else must pass the check.
CREATE OR REPLACE TEMP MACRO mpg_optional(v, problem) AS
    CASE WHEN v IS NULL OR mpg_kind(v) = 'null' THEN NULL ELSE problem END;

CREATE OR REPLACE TEMP MACRO mpg_enum_problem(name, value, allowed) AS
    CASE WHEN NOT list_contains(allowed, value) THEN 'unknown ' || name || ': ' || value END;


-- Why a decoded line (NULL: it was not UTF-8) is not a JSON object, or NULL when it is one.
CREATE OR REPLACE TEMP MACRO mpg_line_problem(text) AS
    CASE WHEN text IS NULL THEN 'invalid UTF-8'
         WHEN trim(text) = '' THEN 'empty line'
         WHEN NOT json_valid(text) THEN 'invalid JSON'
         WHEN left(ltrim(text), 1) <> '{' THEN 'not a JSON object'
    END;

-- The start of every parse: each line of the relation named `lines_table` (columns line,
-- raw_bytes) decoded as UTF-8, why it is not a JSON object (`line_problem`), and else its fields as
-- JSON values, named by `shape` (a json_transform structure, every field typed JSON).
CREATE OR REPLACE TEMP MACRO mpg_json_objects(lines_table, shape) AS TABLE
    SELECT
        line,
        raw,
        mpg_line_problem(raw) AS line_problem,
        CASE WHEN mpg_line_problem(raw) IS NULL THEN json_transform(raw, shape) END AS j
    FROM (SELECT line, try(decode(raw_bytes)) AS raw FROM query_table(lines_table));
