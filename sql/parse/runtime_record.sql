-- A runtime span's typed fields, as both parses of a runtime line end (runtime.sql and
-- runtime_ordinary.sql; mpg.transforms.parse_sql renders this select list into each): `step` only
-- on the kinds that have one (`has_step`), `rank` only on step spans; NULL elsewhere (ignored
-- unchecked).
job_id,
attempt,
kind,
start,
"end",
case when has_step then step end as step,
case when kind = 'step' then rank end as rank
