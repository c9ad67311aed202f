-- A profile record's typed fields, as both parses of a profiles line end (profiles.sql and
-- profiles_ordinary.sql; mpg.transforms.parse_sql renders this select list into each): every
-- field on every record.
job_id,
ts,
step,
step_time_s,
model_flops,
hbm_bytes,
chips,
flops_source
