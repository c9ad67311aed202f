-- The owners of some jobs, as their JOB_SUBMIT records name them (the published tables do not
-- carry owners; the record store does).
-- grain: one row per job of $job_ids that has a JOB_SUBMIT with an owner.
-- parameters: $files (VARCHAR[], not empty): the record store's scheduler Parquet files;
--   $job_ids (VARCHAR[]).
-- A job submitted twice (a duplicate the run accepted) keeps its first record's owner.
with submits as (
    select job_id, owner, file, line
    from read_parquet($files)
    where type = 'JOB_SUBMIT' and owner is not null and list_contains($job_ids, job_id)
),

final as (
    select job_id, arg_min(owner, (file, line)) as owner
    from submits
    group by job_id
)

select * from final
order by job_id
