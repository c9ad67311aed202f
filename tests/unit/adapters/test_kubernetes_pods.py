"""When a Kueue Workload's pods held their chips: each rule of `mpg.adapters.kubernetes_pods` on a
few objects, converted in memory (`read_objects` and `derive`, no CLI, no files), checked
against the scheduler events written here by hand.

Every case is one Workload `team-t/jobset-t-00001` of a JobSet `t` with one pod set `main` of 2
pods x 8 H100s (16 GPUs), created at 09:00 and admitted at 09:10 unless said otherwise; its pods
are written by the fixture's builders (tests/support/adapters/kubernetes_pods.py) as kubectl and the
event exporter show them.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any

import polars as pl
import pytest

from mpg.adapters.kubernetes import kubernetes_options
from mpg.adapters.kubernetes_derive import derive
from mpg.adapters.kubernetes_read import read_objects
from mpg.adapters.kubernetes_state import SEALED
from tests.support.adapters import kubernetes_pods as kp
from tests.support.adapters import make_kubernetes_fixtures as fx

NS, NAME = "team-t", "jobset-t-00001"
H100 = (kp.GPU, 8, {fx.GPU_NODE: "nvidia-h100-80gb"})


a_workload = fx.small_workload


def pod(index: int, bound: str | None, end: str | None, how: str, **kw: Any) -> kp.Pod:
    """Pod `index` of JobSet t's Job `t-main-0`, created 09:10:01; times `HH:MM:SS[.f]`."""
    return kp.Pod(
        NS, "t", "main", 0, index, 0, f"t/{index}/{kw.pop('seed', '')}", *H100,
        fx.t20("09:10:01"), None if bound is None else fx.t20(bound),
        None if bound is None else f"node-{index}", None if end is None else fx.t20(end), how,
        **kw,
    )  # fmt: skip


def convert(*objects: dict[str, Any], as_of: str = "2026-11-20T12:00:00Z") -> Any:
    """The objects read as records of one file, converted; (scheduler events, record fates,
    allocated_from per job)."""
    raws = [json.dumps(o) for o in objects]
    records = pl.DataFrame(
        {"file": ["in.json"] * len(raws), "line": range(1, len(raws) + 1), "raw": raws},
        schema_overrides={"line": pl.Int64},
    ).with_columns(pl.lit(None, pl.String).alias("malformed"))
    args = argparse.Namespace(
        accelerator=[],
        chip_generation=None,
        workload_class="training",
        framework="other",
        as_of=as_of,
        no_runtime=True,
        owner_label=None,
        keep_days=2.0,
    )
    derived = derive(
        read_objects([], records), kubernetes_options(args), pl.DataFrame(schema=SEALED), None
    )
    events = [
        (r["type"], r["ts"].strftime("%H:%M:%S.%f").rstrip("0").rstrip("."), r["task_index"],
         r.get("chips") or r.get("state"))
        for r in derived.scheduler.iter_rows(named=True)
        if r["type"] != "JOB_SUBMIT"
    ]  # fmt: skip
    sources = dict(derived.workloads.select("job_id", "allocated_from").iter_rows())
    return events, derived.records, sources


ADMITTED = [*fx.admitted(fx.at(20, "09:10:00"), "q")]
NOON = fx.at(20, "12:00:00")
HOUR = kp.when(NOON)


def objects_and_events(*pods: kp.Pod, at: str = NOON) -> list[dict[str, Any]]:
    """The pods as a snapshot taken `at` shows those that exist then, and all their events."""
    moment = kp.when(at)
    return [
        *(kp.pod_object(p, moment) for p in pods if p.exists_at(moment)),
        *(e for p in pods for e in kp.pod_events(p)),
    ]


def test_bound_pods_hold_and_their_ends() -> None:
    """Pod 0 bound 09:10:20 (its PodScheduled; its Scheduled event says .4 later), pod 1 at
    09:10:31.5 (deleted before the snapshot: its event alone); 16 GPUs from 09:10:31.5. Pod 0
    fails (its container exits 1) at 10:00; pod 1 is stopped (Killing) at 10:00:05."""
    first = pod(0, "09:10:20.4", "10:00", "done")
    second = pod(1, "09:10:31.5", "10:00:05", "killed")
    objects = objects_and_events(first, second)
    failed = objects[0]
    failed["status"]["phase"] = "Failed"
    failed["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] = 1
    events, _, sources = convert(a_workload(ADMITTED), *objects)
    assert events == [
        ("TASK_SCHEDULE", "09:10:20", 1, 8),
        ("TASK_SCHEDULE", "09:10:31.5", 2, 8),
        ("TASK_FAIL", "10:00:00", 1, None),
        ("TASK_EVICT", "10:00:05", 2, None),
    ]
    assert sources == {f"{NS}/{NAME}": "pods"}


def test_what_does_not_end_a_pod() -> None:
    """A container restarted by a failed probe (Killing "... will be restarted"), a cancelled
    taint eviction, and a NodeNotReady after which the pod was Ready again, all leave the pod
    holding its chips; the one it is Ready after ends nothing, the end does (11:00)."""
    first, second = pod(0, "09:10:20", "11:00", "done"), pod(1, "09:10:21", "11:00", "done")
    objects = objects_and_events(first, second)
    ref = kp.pod_ref(first)
    restarted = kp.core_event(
        ref, "Killing", "Container main failed liveness probe, will be restarted",
        kp.when(fx.t20("09:40:00")), "kubelet", host="node-0",
    )  # fmt: skip
    not_ready = kp.core_event(
        ref, "NodeNotReady", "Node is not ready", kp.when(fx.t20("09:50:00")), "node-controller"
    )
    cancelled = kp.core_event(
        kp.pod_ref(first, with_uid=False),
        "TaintManagerEviction",
        f"Cancelling deletion of Pod {NS}/{first.name}",
        kp.when(fx.t20("09:51:00")),
        "taint-eviction-controller",
    )
    ready = objects[0]["status"]["conditions"][2]
    assert ready["type"] == "Ready"
    ready |= {"status": "True", "lastTransitionTime": fx.t20("09:51:10"), "reason": None}
    events, _, _ = convert(a_workload(ADMITTED), *objects, restarted, not_ready, cancelled)
    assert events == [
        ("TASK_SCHEDULE", "09:10:20", 1, 8),
        ("TASK_SCHEDULE", "09:10:21", 2, 8),
        ("TASK_FINISH", "11:00:00", 1, None),
        ("TASK_FINISH", "11:00:00", 2, None),
    ]


def test_a_lost_node_a_deletion_and_a_disruption() -> None:
    """Pod 0's node stops answering at 09:30 and the taint manager deletes it at 09:35: lost
    from 09:30. Pod 1 is deleted with a 30 s grace (deletionTimestamp 10:00:30): stopped at
    10:00:00; deleted instead with a DisruptionTarget condition (the scheduler preempted it at
    10:20), stopped then."""
    lost = pod(0, "09:10:20", "09:30", "lost")
    deleted = pod(1, "09:10:21", None, "running")
    objects = objects_and_events(lost, deleted)
    shown = next(o for o in objects if o.get("kind") == "Pod")
    shown["metadata"] |= {
        "deletionTimestamp": fx.t20("10:00:30"),
        "deletionGracePeriodSeconds": 30,
    }
    events, _, _ = convert(a_workload(ADMITTED), *objects)
    assert events == [
        ("TASK_SCHEDULE", "09:10:20", 1, 8),
        ("TASK_SCHEDULE", "09:10:21", 2, 8),
        ("TASK_LOST", "09:30:00", 1, None),
        ("TASK_EVICT", "10:00:00", 2, None),
    ]
    disrupted = objects_and_events(replace(deleted, seed="d"))[0]
    disrupted["status"]["conditions"].append(
        {"lastTransitionTime": fx.t20("10:20:00"), "reason": "PreemptionByScheduler",
         "status": "True", "type": "DisruptionTarget"}
    )  # fmt: skip
    events, _, _ = convert(a_workload(ADMITTED), *objects_and_events(lost), disrupted)
    assert events[-1] == ("TASK_EVICT", "10:20:00", 2, None)


def test_pods_partly_shown_leave_the_admission_to_decide() -> None:
    """One pod of the two admitted is in the input: the admission (task 0, 16 GPUs from 09:10)
    decides, not one pod's 8; a pod never bound but shown (FailedScheduling) counts as shown:
    then its Workload never held all 16."""
    one = pod(0, "09:10:20", None, "running")
    events, _, sources = convert(a_workload(ADMITTED), *objects_and_events(one))
    assert events == [("TASK_SCHEDULE", "09:10:00", 0, 16)]
    assert sources == {f"{NS}/{NAME}": "admission"}
    pending = pod(1, None, None, "pending", seed="p")
    events, _, sources = convert(a_workload(ADMITTED), *objects_and_events(one, pending))
    assert events == [("TASK_SCHEDULE", "09:10:20", 1, 8)]
    assert sources == {f"{NS}/{NAME}": "pods"}


def test_pods_known_only_by_name() -> None:
    """Pods deleted before any snapshot are known from their events: they belong to the Workload
    whose JobSet and replicated job their name carries (`t-main-0-<i>-<suffix>`); a name two
    Workloads could have made (JobSet `a` with replicated job `b-main`, JobSet `a-b` with
    `main`) is quarantined, and the pod event of no Workload ignored."""
    gone = [pod(i, f"09:10:2{i}.5", "09:40", "killed") for i in (0, 1)]
    only_events = [e for p in gone for e in kp.pod_events(p)]
    events, _, _ = convert(a_workload(ADMITTED), *only_events)
    assert events == [
        ("TASK_SCHEDULE", "09:10:20.5", 1, 8),
        ("TASK_SCHEDULE", "09:10:21.5", 2, 8),
        ("TASK_EVICT", "09:40:00", 1, None),
        ("TASK_EVICT", "09:40:00", 2, None),
    ]
    a = fx.workload(
        fx.KUEUE_V1, NS, "jobset-a-1", (*fx.JOBSET_OWNER, "a"), fx.at(20, "09:00:00"),
        [fx.podset("b-main", 1, fx.GPU, 8, H100[2])], ADMITTED, queue="q",
    )  # fmt: skip
    ab = fx.workload(
        fx.KUEUE_V1, NS, "jobset-a-b-2", (*fx.JOBSET_OWNER, "a-b"), fx.at(20, "09:00:00"),
        [fx.podset("main", 1, fx.GPU, 8, H100[2])], ADMITTED, queue="q",
    )  # fmt: skip
    shared = kp.Pod(NS, "a-b", "main", 0, 0, 0, "x", *H100, fx.t20("09:10:01"),
                    fx.t20("09:10:20"), "n", None, "running")  # fmt: skip
    stranger = kp.Pod("web", "site", None, 0, 0, 0, "w", None, 0, {}, fx.t20("09:00:00"),
                      fx.t20("09:00:05"), "n", None, "running")  # fmt: skip
    records = kp.pod_events(shared) + kp.pod_events(stranger)
    _, fates, _ = convert(a, ab, *records)
    about = fates.filter(pl.col("rid") >= 2)
    reasons = about.get_column("reason").drop_nulls().unique().to_list()
    assert reasons == ["matches several Workloads of one name: give uids"]
    assert about.get_column("ignored").drop_nulls().unique().to_list() == ["Pod events"]


@pytest.mark.parametrize("gated", [False, True])
def test_a_pod_created_before_its_admission(gated: bool) -> None:
    """Kueue's pod integration creates pods gated before admitting them: a pod first seen
    before the admission belongs to its first attempt (and is bound after it)."""
    early = "09:05:00" if gated else "09:10:01"
    pods = [replace(pod(i, f"09:10:2{i}", None, "running"), created=fx.t20(early)) for i in (0, 1)]
    events, _, _ = convert(a_workload(ADMITTED), *objects_and_events(*pods))
    assert events == [("TASK_SCHEDULE", "09:10:20", 1, 8), ("TASK_SCHEDULE", "09:10:21", 2, 8)]


def test_a_pod_that_ended_with_no_containers_end() -> None:
    """Evicted by its kubelet before its container ran (phase Failed, no container terminated):
    its Ready condition turning False (10:15) says when it stopped holding its GPUs."""
    first, second = pod(0, "09:10:20", None, "running"), pod(1, "09:10:21", None, "running")
    objects = objects_and_events(first, second)
    evicted = objects[0]
    evicted["status"] |= {"phase": "Failed", "reason": "Evicted", "containerStatuses": []}
    ready = evicted["status"]["conditions"][2]
    ready |= {"status": "False", "lastTransitionTime": fx.t20("10:15:00")}
    events, _, _ = convert(a_workload(ADMITTED), *objects)
    assert events == [
        ("TASK_SCHEDULE", "09:10:20", 1, 8),
        ("TASK_SCHEDULE", "09:10:21", 2, 8),
        ("TASK_FAIL", "10:15:00", 1, None),
    ]
