-- The latest instant among one source's accepted records, and the record that holds it: the run's
-- end of data (where open jobs stop wanting chips) is the later of the scheduler's and runtime's.
-- grain: one row (none when the files hold no record).
-- parameters: $files (VARCHAR[], not empty): the Parquet files of the record store's scheduler or
--   runtime source.
-- The instant is a scheduler event's `ts` or a span's `end` (docs/decisions.md: profile times do
-- not count), picked by name: each source has exactly one of the two columns. Of records at the
-- same instant, the smallest (file, line) is named.
with records as (
    select columns('^(ts|end)$') as instant, file, line
    from read_parquet($files)
),

final as (
    select epoch_us(instant) as instant_us, file, line
    from records
    order by instant desc, file, line
    limit 1
)

select * from final
