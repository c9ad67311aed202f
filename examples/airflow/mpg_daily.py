"""An Airflow DAG that runs `mpg run` once a day (Airflow 3; see docs/scaling.md).

Copy it into the DAGs folder and set the paths below. Each run reads the files of the trace root
that are new or changed since the last run and updates only what they change, publishing what one
run over every file would (docs/operations.md), so a day's run that fails is simply retried, and a
later run catches up on its own: no catch-up runs, and never two at once (mpg also holds a lock on
the output folder and refuses a second writer with exit code 2, which Airflow retries like any
failure).

Airflow 2 names the imports `from airflow import DAG` and
`from airflow.operators.bash import BashOperator`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

# The mpg installed for the scheduler's workers, the trace root the exporters fill, and the output
# folder analysts read. Beam options go at the end: on a Flink cluster that mounts both folders,
# say, add `--runner=FlinkRunner --flink_master=flink-jobmanager:8081`.
COMMAND = "/opt/mpg/.venv/bin/mpg run --traces /data/fleet-traces --out /data/mpg --buckets 256"

with DAG(
    dag_id="mpg_daily",
    description="ML Productivity Goodput tables from the fleet's traces",
    # 02:30 UTC: after the exporters have delivered the day that ended at midnight.
    schedule="30 2 * * *",
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    default_args={
        "retries": 3,
        "retry_delay": timedelta(minutes=15),
        "retry_exponential_backoff": True,
        "execution_timeout": timedelta(hours=3),
    },
    tags=["mpg"],
) as dag:
    BashOperator(task_id="mpg_run", bash_command=COMMAND)
