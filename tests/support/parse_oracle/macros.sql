-- Frozen oracle (tests/support/parse_oracle): a copy of sql/parse at commit 12cf9d5. Do not edit.
-- Field checks shared by the three parse queries (sql/parse/*.sql).
-- The only file here with more than one statement: DuckDB declares one macro per statement, and
-- these belong together. Each *_problem macro returns the reason a JSON value cannot be used as
-- that field, or NULL when it can; each typed macro returns the value once it passed its check.
-- A JSON null counts as a missing field. Where a check needs the typed value too (`n`, `x`, `t`:
-- mpg_int, mpg_num, mpg_ts of the value), the caller types each field once and passes it in.

-- The kind of a JSON value, from its text: a value is one token, so its first character decides,
-- and an integer is all digits. (json_type would parse every value again, several times slower.)
CREATE OR REPLACE TEMP MACRO mpg_kind(v) AS
    CASE left(CAST(v AS VARCHAR), 1)
        WHEN '"' THEN 'string'
        -- null, or `nan`: DuckDB's reader takes NaN in any case, and NaN is a number
        WHEN 'n' THEN CASE WHEN CAST(v AS VARCHAR) = 'null' THEN 'null' ELSE 'number' END
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
        CASE WHEN mpg_kind(v) <> 'string' THEN 'wrong type: ' || name || ' must be a string' END);

-- A key that groups records: an empty one would merge unrelated records. (Other strings may be
-- empty: an empty owner is still an owner nobody named, and an empty enum value is unknown.)
CREATE OR REPLACE TEMP MACRO mpg_key_problem(name, v) AS
    coalesce(
        mpg_str_problem(name, v),
        CASE WHEN mpg_str(v) = '' THEN 'out of range: ' || name || ' is empty' END);

-- NaN, Infinity or a number beyond the double range is "not finite" wherever a number is due,
-- an integer included: the value is out of range, whatever its type.
CREATE OR REPLACE TEMP MACRO mpg_not_finite(name, v, x) AS
    CASE WHEN isfinite(x) THEN NULL  -- the usual case, decided without the kind
         WHEN mpg_kind(v) IN ('integer', 'number') THEN 'out of range: ' || name || ' is not finite'
    END;

CREATE OR REPLACE TEMP MACRO mpg_int_problem(name, v, n) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) <> 'integer' THEN coalesce(
                 mpg_not_finite(name, v, mpg_num(v)),
                 'wrong type: ' || name || ' must be an integer')
             WHEN n IS NULL
                 THEN 'out of range: ' || name || ' does not fit in 64 bits'
        END);

CREATE OR REPLACE TEMP MACRO mpg_num_problem(name, v, x) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) NOT IN ('integer', 'number')
                 THEN 'wrong type: ' || name || ' must be a number'
        END,
        mpg_not_finite(name, v, x));

-- A count of chips. The accounting sums them per job in 64-bit integers: the bound keeps any
-- plausible number of records far from overflow.
CREATE OR REPLACE TEMP MACRO mpg_chips_problem(name, v, n) AS
    coalesce(
        mpg_int_problem(name, v, n),
        CASE WHEN NOT n BETWEEN 1 AND 1000000000
            THEN 'out of range: ' || name || ' must be between 1 and 1000000000' END);

-- An amount of work (FLOPs, bytes), summed per job-day: the bound keeps every sum finite.
CREATE OR REPLACE TEMP MACRO mpg_amount_problem(name, v, x) AS
    coalesce(
        mpg_num_problem(name, v, x),
        CASE WHEN x < 0 THEN 'out of range: ' || name || ' must be >= 0'
             WHEN x > 1e30 THEN 'out of range: ' || name || ' above 1e30' END);

-- RFC 3339 only: a date, 'T' (or a space), a time with optional fraction, and 'Z' or an offset.
-- DuckDB alone would also take a missing offset or hour 24; the pattern rules those out first.
-- The instant must then lie in [min_time, max_time): outside it is a clock fault, or a time that
-- would stretch every open job to it.
CREATE OR REPLACE TEMP MACRO mpg_ts_problem(name, v, t, min_time, max_time) AS
    coalesce(
        mpg_missing(name, v),
        CASE WHEN mpg_kind(v) <> 'string' THEN 'wrong type: ' || name || ' must be an RFC 3339 string'
             WHEN NOT regexp_full_match(json_extract_string(v, '$'),
                     '\d{4}-\d{2}-\d{2}[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)')
                  OR t IS NULL
                 THEN 'unparseable time: ' || name
             WHEN NOT (t >= min_time AND t < max_time)
                 THEN 'out of range: ' || name || ' is outside ' || strftime(min_time, '%Y-%m-%d')
                      || '..' || strftime(max_time - INTERVAL 1 DAY, '%Y-%m-%d')
        END);

-- An optional field: absent or null is fine, anything else must pass the check.
CREATE OR REPLACE TEMP MACRO mpg_optional(v, problem) AS
    CASE WHEN v IS NULL OR mpg_kind(v) = 'null' THEN NULL ELSE problem END;

CREATE OR REPLACE TEMP MACRO mpg_enum_problem(name, value, allowed) AS
    CASE WHEN NOT list_contains(allowed, value) THEN 'unknown ' || name || ': ' || value END;


-- JSON's whitespace (a line holds no line feed): what an "empty line" is made of.
CREATE OR REPLACE TEMP MACRO mpg_json_space() AS chr(32) || chr(9) || chr(13);

-- Why a decoded line (NULL: it was not UTF-8) is not a JSON object, or NULL when it is one.
CREATE OR REPLACE TEMP MACRO mpg_line_problem(text) AS
    CASE WHEN text IS NULL THEN 'invalid UTF-8'
         WHEN trim(text, mpg_json_space()) = '' THEN 'empty line'
         WHEN NOT json_valid(text) THEN 'invalid JSON'
         WHEN left(ltrim(text, mpg_json_space()), 1) <> '{' THEN 'not a JSON object'
    END;

-- The first key an object names a second time. DuckDB reads the first of two values, Python's
-- json the last: such a record means different things to different readers.
CREATE OR REPLACE TEMP MACRO mpg_repeated_key(keys) AS
    list_filter(keys, lambda k, i: list_position(keys, k) < i)[1];

-- The start of every parse: each line of the relation named `lines_table` (columns line,
-- raw_bytes) decoded as UTF-8, why it is not a JSON object whose keys are distinct
-- (`line_problem`), and else its fields as JSON values, named by `shape` (a json_transform
-- structure, every field typed JSON). Keys are compared only where the object holds more keys
-- than `shape` found (a repeated, unknown or null one): an ordinary record costs one count.
CREATE OR REPLACE TEMP MACRO mpg_json_objects(lines_table, shape) AS TABLE
    SELECT
        line,
        raw,
        CASE WHEN line_problem IS NOT NULL THEN line_problem
             WHEN len(json_keys(raw)) > fields_found
                 THEN 'invalid JSON: duplicate key ' || mpg_repeated_key(json_keys(raw))
        END AS line_problem,
        j
    FROM (
        SELECT *, list_count(list_value(*COLUMNS(j.*))) AS fields_found
        FROM (
            SELECT
                line,
                raw,
                mpg_line_problem(raw) AS line_problem,
                CASE WHEN mpg_line_problem(raw) IS NULL THEN json_transform(raw, shape) END AS j
            FROM (SELECT line, try(decode(raw_bytes)) AS raw FROM query_table(lines_table))
        )
    );
