"""The scheduling example (`examples/airflow/mpg_daily.py`) is valid Python whose command mpg
accepts, retried and never overlapping. Airflow is not a dependency: the DAG is parsed, never
imported."""

from __future__ import annotations

import ast
import shlex
from pathlib import Path

import pytest

from mpg.cli.command import _parser
from mpg.pipelines.runners import WORKER_PLUGIN, beam_args
from tests.support.files import ROOT

DAG_FILE = ROOT / "examples" / "airflow" / "mpg_daily.py"


@pytest.fixture(scope="module")
def dag() -> ast.Module:
    return ast.parse(DAG_FILE.read_text(), filename=str(DAG_FILE))


def _settings(module: ast.Module) -> dict[str, object]:
    """Every literal setting in the file by name: keyword arguments and `default_args` entries
    (each name is used once)."""
    settings: dict[str, object] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Constant):
            settings[str(node.arg)] = node.value.value
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                    settings[key.value] = value.value
    return settings


def test_the_airflow_example_runs_a_command_mpg_accepts(dag: ast.Module) -> None:
    (assignment,) = [
        node
        for node in dag.body
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["COMMAND"]
    ]
    program, *argv = shlex.split(ast.literal_eval(assignment.value))
    args, rest = _parser().parse_known_args(argv)
    assert Path(program).name == "mpg"
    assert (args.command, args.traces, args.out, args.buckets) == (
        "run",
        "/data/fleet-traces",
        "/data/mpg",
        256,
    )
    assert beam_args(rest) == ("--runner=FnApiRunner", WORKER_PLUGIN)


def test_the_airflow_example_runs_daily_retried_and_never_two_at_once(dag: ast.Module) -> None:
    settings = _settings(dag)
    names = ("dag_id", "schedule", "catchup", "max_active_runs", "retries", "task_id")
    assert {name: settings[name] for name in names} == {
        "dag_id": "mpg_daily",
        "schedule": "30 2 * * *",
        "catchup": False,
        "max_active_runs": 1,
        "retries": 3,
        "task_id": "mpg_run",
    }
