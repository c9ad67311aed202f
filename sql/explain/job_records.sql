-- The accepted records of one job, from one source's files of the record store.
-- grain: one row per accepted record of the job (with its provenance: file, line).
-- parameters: $files (VARCHAR[], not empty): the source's Parquet files,
--   records/source=S/day=D/bucket=NNNN/part-0.parquet; $job_id (VARCHAR).
-- The run's bucket count is not recorded, so the job's bucket is unknown and every bucket's file
-- is passed; files are sorted by job_id, so row groups of other jobs are skipped on their
-- statistics, but every footer is read.
with records as (
    select * exclude (source, day, bucket)
    from read_parquet($files, hive_partitioning = true)
),

final as (
    select * from records where job_id = $job_id
)

select * from final
order by file, line
