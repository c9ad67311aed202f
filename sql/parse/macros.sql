-- Field checks shared by the parse queries (sql/parse/*.sql).
-- The only file here with more than one statement: DuckDB declares one macro per statement, and
-- these belong together. Each *_problem macro returns the reason a field's value cannot be used,
-- or NULL when it can. The caller computes each field's facts once, in columns, and passes them
-- in: `k` its kind (mpg_kind of its JSON value, NULL when absent), `s` its string, `n`, `x`, `t`
-- its value typed (mpg_int, mpg_num, mpg_ts). Checks then cost a comparison each, and a query
-- stays small enough to plan in milliseconds (macros expanded around raw JSON values made the
-- old queries' expressions so large that planning one took 60-250 ms, whatever the block's size).
-- A JSON null counts as a missing field.

-- The kind of a JSON value, from its text: a value is one token, so its first character decides,
-- and an integer is all digits. (json_type would parse every value again, several times slower.)
-- An absent value (SQL NULL) has no kind: NULL.
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
                  WHEN v IS NOT NULL THEN 'number' END
    END;

CREATE OR REPLACE TEMP MACRO mpg_str(v) AS json_extract_string(v, '$');
CREATE OR REPLACE TEMP MACRO mpg_int(v) AS TRY_CAST(v AS BIGINT);
CREATE OR REPLACE TEMP MACRO mpg_num(v) AS TRY_CAST(v AS DOUBLE);
-- A string as an instant. RFC 3339 allows lower-case 't' and 'z', which DuckDB's cast does not:
-- upper-case first.
CREATE OR REPLACE TEMP MACRO mpg_ts(s) AS TRY_CAST(upper(s) AS TIMESTAMPTZ);
-- The fast path's instant: the cast alone, NULL for a lower-case 't' or 'z' (a line the full rules
-- then read, with mpg_ts). Exporters write upper case; not upper-casing every instant of every
-- line is 5% of the fast path's time.
CREATE OR REPLACE TEMP MACRO mpg_ts_upper(s) AS TRY_CAST(s AS TIMESTAMPTZ);

-- RFC 3339 only: a date, 'T' (or a space), a time with optional fraction, and 'Z' or an offset.
-- DuckDB's cast alone would also take a missing offset or hour 24; this rules those out.
CREATE OR REPLACE TEMP MACRO mpg_rfc3339(s) AS
    regexp_full_match(s,
        '\d{4}-\d{2}-\d{2}[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)');

-- Whether an instant lies in [min_time, max_time): outside it is a clock fault, or a time that
-- would stretch every open job to it.
CREATE OR REPLACE TEMP MACRO mpg_in_window(t, min_time, max_time) AS t >= min_time AND t < max_time;

CREATE OR REPLACE TEMP MACRO mpg_missing(name, k) AS
    CASE WHEN k IS NULL OR k = 'null' THEN 'missing field: ' || name END;

CREATE OR REPLACE TEMP MACRO mpg_str_problem(name, k) AS
    coalesce(
        mpg_missing(name, k),
        CASE WHEN k <> 'string' THEN 'wrong type: ' || name || ' must be a string' END);

-- A key that groups records: an empty one would merge unrelated records. (Other strings may be
-- empty: an empty owner is still an owner nobody named, and an empty enum value is unknown.)
CREATE OR REPLACE TEMP MACRO mpg_key_problem(name, k, s) AS
    coalesce(
        mpg_str_problem(name, k),
        CASE WHEN s = '' THEN 'out of range: ' || name || ' is empty' END);

-- NaN, Infinity or a number beyond the double range is "not finite" wherever a number is due,
-- an integer included: the value is out of range, whatever its type.
CREATE OR REPLACE TEMP MACRO mpg_not_finite(name, k, x) AS
    CASE WHEN isfinite(x) THEN NULL  -- the usual case, decided without the kind
         WHEN k IN ('integer', 'number') THEN 'out of range: ' || name || ' is not finite'
    END;

-- `v` is the JSON value: read as a double only where it is not an integer literal.
CREATE OR REPLACE TEMP MACRO mpg_int_problem(name, v, k, n) AS
    coalesce(
        mpg_missing(name, k),
        CASE WHEN k <> 'integer' THEN coalesce(
                 mpg_not_finite(name, k, mpg_num(v)),
                 'wrong type: ' || name || ' must be an integer')
             WHEN n IS NULL
                 THEN 'out of range: ' || name || ' does not fit in 64 bits'
        END);

CREATE OR REPLACE TEMP MACRO mpg_num_problem(name, k, x) AS
    coalesce(
        mpg_missing(name, k),
        CASE WHEN k NOT IN ('integer', 'number')
                 THEN 'wrong type: ' || name || ' must be a number'
        END,
        mpg_not_finite(name, k, x));

-- A count of chips. The accounting sums them per job in 64-bit integers: the bound keeps any
-- plausible number of records far from overflow.
CREATE OR REPLACE TEMP MACRO mpg_chips_ok(n) AS n BETWEEN 1 AND 1000000000;

CREATE OR REPLACE TEMP MACRO mpg_chips_problem(name, v, k, n) AS
    coalesce(
        mpg_int_problem(name, v, k, n),
        CASE WHEN NOT mpg_chips_ok(n)
            THEN 'out of range: ' || name || ' must be between 1 and 1000000000' END);

-- An amount of work (FLOPs, bytes), summed per job-day: the bound keeps every sum finite.
CREATE OR REPLACE TEMP MACRO mpg_amount_ok(x) AS x >= 0 AND x <= 1e30;

CREATE OR REPLACE TEMP MACRO mpg_amount_problem(name, k, x) AS
    coalesce(
        mpg_num_problem(name, k, x),
        CASE WHEN x < 0 THEN 'out of range: ' || name || ' must be >= 0'
             WHEN x > 1e30 THEN 'out of range: ' || name || ' above 1e30' END);

-- `s` the value as a string, `t` that string as an instant (mpg_ts).
CREATE OR REPLACE TEMP MACRO mpg_ts_problem(name, k, s, t, min_time, max_time) AS
    coalesce(
        mpg_missing(name, k),
        CASE WHEN k <> 'string' THEN 'wrong type: ' || name || ' must be an RFC 3339 string'
             WHEN NOT mpg_rfc3339(s) OR t IS NULL
                 THEN 'unparseable time: ' || name
             WHEN NOT mpg_in_window(t, min_time, max_time)
                 THEN 'out of range: ' || name || ' is outside ' || strftime(min_time, '%Y-%m-%d')
                      || '..' || strftime(max_time - INTERVAL 1 DAY, '%Y-%m-%d')
        END);

-- An optional field: absent or null is fine, anything else must pass the check.
CREATE OR REPLACE TEMP MACRO mpg_optional(k, problem) AS
    CASE WHEN k IS NULL OR k = 'null' THEN NULL ELSE problem END;

CREATE OR REPLACE TEMP MACRO mpg_enum_problem(name, value, allowed) AS
    CASE WHEN NOT list_contains(allowed, value) THEN 'unknown ' || name || ': ' || value END;


-- JSON's whitespace (a line holds no line feed): what an "empty line" is made of.
CREATE OR REPLACE TEMP MACRO mpg_json_space() AS chr(32) || chr(9) || chr(13);

-- Why a decoded line (NULL: it was not UTF-8) is not a JSON object, or NULL when it is one.
-- A line that starts with '{' and is valid JSON is an object: decided without trimming (the
-- trims cost more than the JSON check).
CREATE OR REPLACE TEMP MACRO mpg_line_problem(text) AS
    CASE WHEN text IS NULL THEN 'invalid UTF-8'
         WHEN prefix(text, '{') AND json_valid(text) THEN NULL
         WHEN trim(text, mpg_json_space()) = '' THEN 'empty line'
         WHEN NOT json_valid(text) THEN 'invalid JSON'
         WHEN left(ltrim(text, mpg_json_space()), 1) <> '{' THEN 'not a JSON object'
    END;

-- The first key an object names a second time. DuckDB reads the first of two values, Python's
-- json the last: such a record means different things to different readers.
CREATE OR REPLACE TEMP MACRO mpg_repeated_key(keys) AS
    list_filter(keys, lambda k, i: list_position(keys, k) < i)[1];

-- The start of every full parse: each line of the relation named `lines_table` (columns line,
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
                line_problem,
                CASE WHEN line_problem IS NULL THEN json_transform(raw, shape) END AS j
            FROM (
                SELECT line, raw, mpg_line_problem(raw) AS line_problem
                FROM (SELECT line, try(decode(raw_bytes)) AS raw FROM query_table(lines_table))
            )
        )
    );

-- The start of every fast path (sql/parse/*_ordinary.sql): each line of the relation named
-- `lines_table` (columns line, raw_bytes) decoded as UTF-8 (`raw`), and its fields typed straight
-- away as `j` by `shape` (a json_transform structure). json_transform's casts are lax (8.0 or "8"
-- read as 8, a number read as its text), which is harmless here: a line is ordinary only where it
-- is spelled exactly as json.dumps writes these values. Not JSON: NULL (json_valid first: try()
-- around json_transform is cheaper on ordinary lines but redoes a whole vector row by row for any
-- invalid line, which made a block of broken lines 4x slower than the full rule set).
CREATE OR REPLACE TEMP MACRO mpg_json_typed(lines_table, shape) AS TABLE
    SELECT line, raw, CASE WHEN json_valid(raw) THEN json_transform(raw, shape) END AS j
    FROM (SELECT line, try(decode(raw_bytes)) AS raw FROM query_table(lines_table));

-- The fast path's test (sql/parse/*_ordinary.sql): whether a line is exactly `spaced`, the text
-- json.dumps writes for the values the line was read as (", " and ": " between items), or that
-- text with compact separators ("," and ":"), and holds no backslash. Without one, no string
-- value holds a quote: then the quotes in `spaced` are those around its keys and strings, the
-- compact text differs from it only by spaces removed (a string value may lose one too, which
-- only makes the line differ), and a line equal to either text has exactly those keys, once
-- each, in that order, each value spelled as written there: `8`, never `8.0`, `"8"` or `8e0`.
CREATE OR REPLACE TEMP MACRO mpg_written_as(line, spaced) AS
    NOT contains(line, '\')
    AND CASE WHEN line = spaced THEN true
             ELSE line = replace(replace(spaced, '": ', '":'), ', "', ',"')
        END;
