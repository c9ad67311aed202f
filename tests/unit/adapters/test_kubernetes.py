"""`mpg.adapters.kubernetes.convert` on a few hand-made Kueue objects, without the CLI: every
canonical record of a Workload whose admission decides (no pods exported), the owner label, and
what is quarantined or ignored, worked out by hand from the rules of
docs/adapters/kubernetes.md. (Each rule of when pods held their chips:
tests/unit/adapters/test_kubernetes_pods.py; a cluster's exports imported at once and day after
day through `mpg import` and `mpg run`: tests/e2e/adapters/test_kubernetes.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.adapters import make_kubernetes_fixtures as fx
from tests.support.conversion import convert, quarantined, records, unordered

JOB = "team-t/jobset-t-00001"
AS_OF = ("--as-of", "2026-11-20T12:00:00Z")


def _export(path: Path, *objects: dict[str, Any]) -> Path:
    """The objects as `kubectl get -o json` writes a List."""
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return path


def test_a_workload_admitted_and_finished_without_its_pods(tmp_path: Path) -> None:
    """The small Workload (2 pods x 8 H100s in LocalQueue `q`, created 09:00) admitted at 09:10
    and finished (Succeeded) at 11:00, no pod exported: the admission decides. Its one pod set is
    task 0 holding 2 x 8 = 16 GPUs from the admission until the job ends (an admission writes no
    release but at an eviction: JOB_END ends what the job holds), one step span of attempt 0;
    the priority is the Workload's `spec.priority` (500), the namespace is the team, the
    LocalQueue the queue, the owner the label --owner-label names."""
    done = fx.small_workload(
        [*fx.admitted(fx.at(20, "09:10:00"), "q"), fx.finished(fx.at(20, "11:00:00"))]
    )
    done["metadata"]["labels"] = {"ml.example.com/owner": "alice"}
    export = _export(tmp_path / "workloads.json", done)
    options = (*AS_OF, "--owner-label", "ml.example.com/owner")
    conversion = convert("kubernetes", [export], *options, root=tmp_path / "root")
    assert (conversion.read, conversion.converted, quarantined(conversion)) == (1, 1, [])
    job = {"job_id": JOB}
    assert unordered(records(conversion, "scheduler")) == unordered(
        [
            {"type": "JOB_SUBMIT", "ts": "2026-11-20T09:00:00Z", **job, "chips_requested": 16,
             "chip_generation": "gpu-h100", "workload_class": "training", "framework": "other",
             "priority": 500, "owner": "alice", "team": "team-t", "queue": "q",
             "allocated_from": "admission"},
            {"type": "TASK_SCHEDULE", "ts": "2026-11-20T09:10:00Z", **job, "task_index": 0,
             "chips": 16},
            {"type": "JOB_END", "ts": "2026-11-20T11:00:00Z", **job, "state": "FINISHED"},
        ]
    )  # fmt: skip
    assert records(conversion, "runtime") == [
        {**job, "attempt": 0, "kind": "step", "start": "2026-11-20T09:10:00Z",
         "end": "2026-11-20T11:00:00Z", "step": 0},
    ]  # fmt: skip


def test_what_cannot_be_converted_is_quarantined_by_its_place_among_the_items(
    tmp_path: Path,
) -> None:
    """A Workload whose pod set no node selector or flavor names an accelerator for, an object
    of a kind the import does not read, and an item that is no object; --chip-generation then
    names the Workload's generation."""
    unnamed = fx.small_workload(fx.admitted(fx.at(20, "09:10:00"), "q"))
    del unnamed["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"]
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    export = _export(tmp_path / "workloads.json", unnamed, config)
    text = json.loads(export.read_text())
    export.write_text(json.dumps({**text, "items": [*text["items"], "oops"]}))
    conversion = convert("kubernetes", [export], *AS_OF, root=tmp_path / "a")
    assert (conversion.read, conversion.converted) == (3, 0)
    assert quarantined(conversion) == [
        ("workloads.json", 1, "no accelerator type: no node selector or flavor names it "
         "(--chip-generation)"),
        ("workloads.json", 2, "unknown kind: ConfigMap"),
        ("workloads.json", 3, "not a JSON object"),
    ]  # fmt: skip
    assert records(conversion, "scheduler") == []
    named = convert(
        "kubernetes", [export], *AS_OF, "--chip-generation", "gpu-h100", root=tmp_path / "b"
    )
    assert (named.read, named.converted, len(quarantined(named))) == (3, 1, 2)
    submitted = [e for e in records(named, "scheduler") if e["type"] == "JOB_SUBMIT"]
    assert [(e["job_id"], e["chip_generation"]) for e in submitted] == [(JOB, "gpu-h100")]
