"""Regenerates tests/fixtures/adapters/kubernetes/ (its README says what each file is).

    .venv/bin/python -m tests.support.adapters.make_kubernetes_fixtures

No cluster runs here, so the objects are written by hand to the published API types, as a GKE
cluster running Kueue v0.19.2 and JobSet v0.12.0 would serialise them (field names, camelCase,
RFC 3339 times, `apiVersion`, `kind`, metadata with uid, ownerReferences and labels; `kubectl -o
json` sorts keys and indents by 4). Sources followed:
- kubernetes-sigs/kueue v0.19.2 (8eab68778fc1): apis/kueue/v1beta1/workload_types.go and
  v1beta2/workload_types.go (Workload), pkg/scheduler/scheduler.go (QuotaReserved, Admitted,
  Pending events), pkg/workload/evict/evict.go (EvictedDueTo<reason>),
  pkg/scheduler/preemption/preemption.go (Preempted), pkg/workload/workload.go (conditions),
  pkg/controller/jobframework/reconciler.go (Started, Stopped, FinishedWorkload on the job);
- kubernetes-sigs/jobset v0.12.0 (f22e565ac3cc): api/jobset/v1alpha2/jobset_types.go,
  pkg/constants/constants.go (restart-attempt label, RestartJobSetFailurePolicyAction),
  pkg/controllers/failure_policy.go;
- kubernetes/api v0.36.3: core/v1/types.go (Event, EventSeries). Kueue and JobSet record with
  the events.k8s.io/v1 recorder, so `kubectl get events` shows them with `eventTime` (microseconds),
  `series`, `action`, `reportingComponent`, and null `firstTimestamp` / `lastTimestamp`.

Scenarios (all times UTC; tests/e2e/adapters/test_kubernetes.py states each timeline again, by
hand):
1. llama-pretrain (TPU v5p, 16 chips): queued 08:00, admitted 09:30, finished 13:30.
2. bert-finetune (H100, 16 GPUs, priority 100): admitted 10:00:05, preempted at 11:00 by
   urgent-eval (priority 1000), requeued, admitted again 12:30, finished 14:00.
3. urgent-eval (H100, 16 GPUs, no node selector: the flavor names the GPU): 10:59:55 to 12:29:30.
4. mixtral-moe (TPU v5p, 32 chips): admitted 22:05 on the 19th, evicted for a failed node at
   01:17:30, requeued, admitted again 01:40, finished 05:00.
5. gemma-sft (H200, 32 GPUs, and a CPU driver): admitted 06:00, JobSet restarts at 07:10:00.15
   and 08:20:00.15 (events; its Jobs labelled restart-attempt 2 came at 08:20:04), done 10:00.
6. sweep-shard (batch Job, H100, 8 pods x 8, minCount 4): admitted with 4 pods 09:00-12:00.
7. grid-search (batch Job, H100, 8 x 8, minCount 6): partial admission refused (Pending) from
   12:10 until deactivated at 15:00.
8. vit-pretrain (TPU v6e, 8 chips): admitted 14:00:03, still running at the 16:00 export.
9. detr-train (H100, 32 GPUs): admitted 10:20, one pod never bound (a tainted node); evicted for
   PodsReadyTimeout at 10:30, admitted again 10:41, finished 11:55.
10. t5-xxl (H100, 64 GPUs): admitted 13:00; a node lost at 14:10:03 under one pod, the JobSet
   restarts at 14:15:05.3, its new pods all bound at 14:19:31; finished 15:40.
Each pod's life is in `scenario_pods` (tests/support/adapters/kubernetes_pods.py writes the objects
and the events); urgent-eval's namespace is in no pod export, mixtral-moe's first pods were on the
19th. Plus hostile/: malformed and unusable objects, each with the reason the test expects.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.support.adapters.kubernetes_pods import (
    Pod,
    core_event,
    pod_events,
    pod_object,
    uid,
    when,
)

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "adapters" / "kubernetes"
KUEUE_V1 = "kueue.x-k8s.io/v1beta1"
KUEUE_V2 = "kueue.x-k8s.io/v1beta2"
JOBSET = "jobset.x-k8s.io/v1alpha2"
TPU, GPU = "google.com/tpu", "nvidia.com/gpu"
TPU_NODE, GPU_NODE = "cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-accelerator"
KUEUE_POD = "kueue-controller-manager-6d8f7b9c4-x2v7q"


def digits(text: str, n: int) -> str:
    """`n` hex digits that depend only on `text` (resource versions, event name suffixes)."""
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def at(day: int, clock: str, micros: int = 0) -> str:
    """`2026-11-<day>T<clock>Z`, with microseconds when given (an event's MicroTime)."""
    return f"2026-11-{day:02d}T{clock}.{micros:06d}Z" if micros else f"2026-11-{day:02d}T{clock}Z"


def condition(kind: str, status: str, reason: str, message: str, when: str) -> dict[str, Any]:
    return {
        "lastTransitionTime": when,
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": kind,
    }


def container(resource: str | None, per_pod: int, image: str) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": "8", "memory": "32Gi"}
    limits: dict[str, str] = {}
    if resource is not None:
        requests[resource] = limits[resource] = str(per_pod)
    return {
        "image": image,
        "name": "main",
        "resources": {"limits": limits, "requests": requests},
    }


def podset(
    name: str,
    count: int,
    resource: str | None,
    per_pod: int,
    selector: dict[str, str],
    *,
    min_count: int | None = None,
    jobset: bool = True,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [container(resource, per_pod, "us-docker.pkg.dev/ml/train:2026.11")],
        "restartPolicy": "Never",
    }
    if selector:
        spec["nodeSelector"] = selector
    if resource is not None:
        spec["tolerations"] = [{"effect": "NoSchedule", "key": resource, "operator": "Exists"}]
    out: dict[str, Any] = {
        "count": count,
        "name": name,
        "template": {"metadata": {}, "spec": spec},
    }
    if min_count is not None:
        out["minCount"] = min_count
    if jobset:
        out["topologyRequest"] = {
            "podIndexLabel": "batch.kubernetes.io/job-completion-index",
            "subGroupCount": 1,
            "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        }
    return out


def workload(
    api: str,
    namespace: str,
    name: str,
    owner: tuple[str, str, str],
    created: str,
    podsets: list[dict[str, Any]],
    conditions: list[dict[str, Any]],
    *,
    priority: tuple[str, int] = ("normal", 500),
    queue: str,
    admission: dict[str, Any] | None = None,
    evictions: list[tuple[str, int]] = (),  # type: ignore[assignment]
    active: bool = True,
) -> dict[str, Any]:
    """A Workload as Kueue writes it: named after its owner, owned by it, in `api`'s version."""
    owner_api, owner_kind, owner_name = owner
    spec: dict[str, Any] = {
        "active": active,
        "podSets": podsets,
        "priority": priority[1],
        "queueName": queue,
    }
    if api == KUEUE_V1:
        spec["priorityClassName"] = priority[0]
        spec["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
    else:
        spec["priorityClassRef"] = {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": priority[0],
        }
    status: dict[str, Any] = {"conditions": conditions}
    if admission is not None:
        status["admission"] = admission
    if evictions:
        status["schedulingStats"] = {
            "evictions": [{"count": n, "reason": r, "underlyingCause": ""} for r, n in evictions]
        }
    return {
        "apiVersion": api,
        "kind": "Workload",
        "metadata": {
            "creationTimestamp": created,
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "generation": 1,
            "labels": {"kueue.x-k8s.io/job-uid": uid(owner_name)},
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": owner_api,
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": owner_kind,
                    "name": owner_name,
                    "uid": uid(owner_name),
                }
            ],
            "resourceVersion": str(int(digits(name, 6), 16)),
            "uid": uid(name),
        },
        "spec": spec,
        "status": status,
    }


def admission(cq: str, *assignments: tuple[str, int, str, str, int]) -> dict[str, Any]:
    """`status.admission`: per pod set (name, count, resource, flavor, chips in all)."""
    return {
        "clusterQueue": cq,
        "podSetAssignments": [
            {
                "count": count,
                "flavors": {resource: flavor},
                "name": name,
                "resourceUsage": {resource: str(total)},
            }
            for name, count, resource, flavor, total in assignments
        ],
    }


def admitted(when: str, cq: str) -> list[dict[str, Any]]:
    return [
        condition(
            "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}", when
        ),
        condition("Admitted", "True", "Admitted", "The workload is admitted", when),
    ]


def finished(when: str, reason: str = "Succeeded") -> dict[str, Any]:
    message = "jobset completed successfully" if reason == "Succeeded" else "jobset failed"
    return condition("Finished", "True", reason, message, when)


class Events:
    """Events as the events.k8s.io/v1 recorder creates them, in their core/v1 form."""

    def __init__(self) -> None:
        self.all: list[dict[str, Any]] = []

    def add(
        self,
        about: tuple[str, str, str, str],
        reason: str,
        message: str,
        when: str,
        *,
        kind: str = "Normal",
        component: str = "kueue-admission",
        series: tuple[int, str] | None = None,
    ) -> dict[str, Any]:
        api, obj_kind, namespace, name = about
        event_name = f"{name}.{digits(name + reason + when, 16)}"
        event: dict[str, Any] = {
            "action": reason,
            "apiVersion": "v1",
            "eventTime": when,
            "firstTimestamp": None,
            "involvedObject": {
                "apiVersion": api,
                "kind": obj_kind,
                "name": name,
                "namespace": namespace,
                "uid": uid(name),
            },
            "kind": "Event",
            "lastTimestamp": None,
            "message": message,
            "metadata": {
                "creationTimestamp": when[:19] + "Z",
                "name": event_name,
                "namespace": namespace,
                "resourceVersion": str(int(digits(event_name, 6), 16)),
                "uid": uid(event_name),
            },
            "reason": reason,
            "reportingComponent": component,
            "reportingInstance": f"{component}-{KUEUE_POD}",
            "source": {},
            "type": kind,
        }
        if series is not None:
            event["series"] = {"count": series[0], "lastObservedTime": series[1]}
        self.all.append(event)
        return event


def series_versions(event: dict[str, Any], *counts: tuple[int, str]) -> list[dict[str, Any]]:
    """The versions of one event an exporter writes as its series grows (same uid)."""
    out = []
    for count, last in counts:
        version = json.loads(json.dumps(event))
        version["series"] = {"count": count, "lastObservedTime": last}
        out.append(version)
    return out


def kubectl_list(items: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
        indent=4,
        sort_keys=True,
    )


def small_workload(conditions: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    """The tests' small cases' Workload `team-t/jobset-t-00001`: 2 pods x 8 H100s (16 GPUs),
    created at 09:00, owned by JobSet `t`, in LocalQueue `q`."""
    return workload(
        KUEUE_V1,
        "team-t",
        "jobset-t-00001",
        (JOBSET, "JobSet", "t"),
        at(20, "09:00:00"),
        [podset("main", 2, GPU, 8, {GPU_NODE: "nvidia-h100-80gb"})],
        conditions,
        queue="q",
        **kw,
    )


# ---------------------------------------------------------------------------------------------
# The cluster: one TPU v5p, one TPU v6e, one H100 and one H200 ClusterQueue, and their flavors.

FLAVORS = {
    "tpu-v5p-2x2x4": {TPU_NODE: "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "2x2x4"},
    "tpu-v5p-2x4x4": {TPU_NODE: "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "2x4x4"},
    "tpu-v6e-2x4": {TPU_NODE: "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"},
    "h100-80gb": {GPU_NODE: "nvidia-h100-80gb"},
    "h200-141gb": {GPU_NODE: "nvidia-h200-141gb"},
    "default-flavor": {},
}


def resource_flavor(name: str, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if labels:
        spec["nodeLabels"] = labels
    return {
        "apiVersion": KUEUE_V1,
        "kind": "ResourceFlavor",
        "metadata": {
            "creationTimestamp": at(1, "00:00:00"),
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "generation": 1,
            "name": name,
            "resourceVersion": str(int(digits(name, 6), 16)),
            "uid": uid(name),
        },
        "spec": spec,
    }


def jobset_object(
    namespace: str, name: str, created: str, restarts: int, completed: str | None
) -> dict[str, Any]:
    """A JobSet as the JobSet controller leaves it (status.restarts counts global restarts)."""
    status: dict[str, Any] = {"restarts": restarts, "restartsCountTowardsMax": restarts}
    if completed is not None:
        status["terminalState"] = "Completed"
        status["conditions"] = [
            condition(
                "Completed", "True", "AllJobsCompleted", "jobset completed successfully", completed
            )
        ]
    return {
        "apiVersion": JOBSET,
        "kind": "JobSet",
        "metadata": {
            "creationTimestamp": created,
            "generation": 2,
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            "name": name,
            "namespace": namespace,
            "resourceVersion": str(int(digits(name, 6), 16)),
            "uid": uid(name),
        },
        "spec": {"failurePolicy": {"maxRestarts": 3}, "suspend": False},
        "status": status,
    }


def child_job(
    namespace: str, jobset: str, rjob: str, index: int, attempt: int, created: str
) -> dict[str, Any]:
    """A child Job of a JobSet, labelled as the JobSet controller labels it (v0.12.0
    pkg/controllers/jobset_controller.go, labelAndAnnotateObject)."""
    name = f"{jobset}-{rjob}-{index}"
    labels = {
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/jobset-name": jobset,
        "jobset.sigs.k8s.io/jobset-uid": uid(jobset),
        "jobset.sigs.k8s.io/replicatedjob-name": rjob,
        "jobset.sigs.k8s.io/restart-attempt": str(attempt),
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "annotations": dict(labels),
            "creationTimestamp": created,
            "labels": labels,
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": JOBSET,
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "JobSet",
                    "name": jobset,
                    "uid": uid(jobset),
                }
            ],
            "uid": uid(f"{name}/{attempt}"),
        },
        "spec": {"completionMode": "Indexed", "suspend": False},
        "status": {"active": 0},
    }


WL = "kueue.x-k8s.io/v1beta2"  # the version Kueue's events name (its storage version)
EVENTS = Events()


def wl_ref(namespace: str, name: str) -> tuple[str, str, str, str]:
    return (WL, "Workload", namespace, name)


def js_ref(namespace: str, name: str) -> tuple[str, str, str, str]:
    return (JOBSET, "JobSet", namespace, name)


def admit_events(
    ref: tuple[str, str, str, str], cq: str, when: str, waited: int, micros: int
) -> None:
    day, clock = int(when[8:10]), when[11:19]
    EVENTS.add(
        ref,
        "QuotaReserved",
        f"Quota reserved in ClusterQueue {cq}, wait time since queued was {waited}s",
        at(day, clock, micros - 1000),
    )
    EVENTS.add(
        ref,
        "Admitted",
        f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s",
        at(day, clock, micros),
    )


def finished_event(js: tuple[str, str, str, str], workload_key: str, when: str) -> None:
    EVENTS.add(
        js,
        "FinishedWorkload",
        f"Workload '{workload_key}' is declared finished",
        when,
        component="kueue-jobset-controller",
    )


def pending(podset_name: str, resource: str, flavor: str, needed: int) -> str:
    return (
        f"couldn't assign flavors to pod set {podset_name}: insufficient unused quota for "
        f"{resource} in flavor {flavor}, {needed} more needed"
    )


JOBSET_OWNER = (JOBSET, "JobSet")
JOB_OWNER = ("batch/v1", "Job")
TPU_V5P = {TPU_NODE: "tpu-v5p-slice"}
H100 = {GPU_NODE: "nvidia-h100-80gb"}


# ---------------------------------------------------------------------------------------------
# The scenarios: each Workload as the 12:00 and the 16:00 export see it (None: not there yet).

NOON, FOUR = 12, 16
LLAMA = "jobset-llama-pretrain-5f2c1"
BERT = "jobset-bert-finetune-8d41e"
URGENT = "jobset-urgent-eval-c07b2"
MIXTRAL = "jobset-mixtral-moe-41d9a"
GEMMA = "jobset-gemma-sft-9e3f0"
SWEEP = "job-sweep-shard-1a2b3"
GRID = "job-grid-search-77c4e"
VIT = "jobset-vit-pretrain-2b6d8"
DETR = "jobset-detr-train-6c0d2"
T5 = "jobset-t5-xxl-3e7a9"


def llama(hour: int) -> dict[str, Any]:
    """1. Admission after queueing: waits 90 min for TPU v5p quota."""
    conditions = [
        *admitted(at(20, "09:30:00"), "tpu-v5p-cq"),
        condition("PodsReady", "True", "Started", "All pods reached readiness", at(20, "09:31:10")),
    ]
    if hour == FOUR:
        conditions.append(finished(at(20, "13:30:00")))
    return workload(
        KUEUE_V1 if hour == FOUR else KUEUE_V2,
        "team-lm",
        LLAMA,
        (*JOBSET_OWNER, "llama-pretrain"),
        at(20, "08:00:00"),
        [podset("workers", 4, TPU, 4, {**TPU_V5P, "cloud.google.com/gke-tpu-topology": "2x2x4"})],
        conditions,
        queue="lm-queue",
        admission=admission("tpu-v5p-cq", ("workers", 4, TPU, "tpu-v5p-2x2x4", 16)),
    )


PREEMPTION = (
    f"Preempted to accommodate a workload (UID: {uid(URGENT)}, JobUID: {uid('urgent-eval')}) "
    "due to prioritization in the ClusterQueue; preemptor path: /gpu-cq; preemptee path: /gpu-cq"
)


def bert(hour: int) -> dict[str, Any]:
    """2. Preempted by a higher-priority workload at 11:00, requeued, admitted again at 12:30."""
    if hour == NOON:  # evicted, its quota released once its pods stopped (11:00:40)
        conditions = [
            condition("QuotaReserved", "False", "Pending", PREEMPTION, at(20, "11:00:40")),
            condition(
                "Admitted",
                "False",
                "NoReservation",
                "The workload has no reservation",
                at(20, "11:00:40"),
            ),
            condition("Evicted", "True", "Preempted", PREEMPTION, at(20, "11:00:00")),
            condition("Preempted", "True", "InClusterQueue", PREEMPTION, at(20, "11:00:00")),
            condition("Requeued", "True", "Preempted", PREEMPTION, at(20, "11:00:40")),
        ]
        state = None
    else:
        previously = f"Previously: {PREEMPTION}"
        conditions = [
            *admitted(at(20, "12:30:00"), "gpu-cq"),
            condition("Evicted", "False", "QuotaReserved", previously, at(20, "12:30:00")),
            condition("Preempted", "False", "QuotaReserved", previously, at(20, "12:30:00")),
            condition("Requeued", "True", "Preempted", PREEMPTION, at(20, "11:00:40")),
            finished(at(20, "14:00:00")),
        ]
        state = admission("gpu-cq", ("trainer", 2, GPU, "h100-80gb", 16))
    found = workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-nlp",
        BERT,
        (*JOBSET_OWNER, "bert-finetune"),
        at(20, "10:00:00"),
        [podset("trainer", 2, GPU, 8, H100)],
        conditions,
        priority=("low", 100),
        queue="nlp-queue",
        admission=state,
        evictions=[("Preempted", 1)],
    )
    found["metadata"]["labels"][OWNER] = "bob"  # Kueue's labelKeysToCopy copied it
    return found


def urgent(hour: int) -> dict[str, Any]:
    """3. The preemptor: no node selector, its flavor (h100-80gb) names the GPU."""
    conditions = admitted(at(20, "11:00:45"), "gpu-cq")
    if hour == FOUR:
        conditions.append(finished(at(20, "12:29:30")))
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-safety",
        URGENT,
        (*JOBSET_OWNER, "urgent-eval"),
        at(20, "10:59:55"),
        [podset("eval", 2, GPU, 8, {})],
        conditions,
        priority=("urgent", 1000),
        queue="safety-queue",
        admission=admission("gpu-cq", ("eval", 2, GPU, "h100-80gb", 16)),
    )


def mixtral(hour: int) -> dict[str, Any]:
    """4. Evicted for a failed node at 01:17:30 (no replacement), requeued, admitted at 01:40."""
    previously = "Previously: Workload was evicted as there was no replacement for a failed node"
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-lm",
        MIXTRAL,
        (*JOBSET_OWNER, "mixtral-moe"),
        at(19, "22:00:00"),
        [podset("workers", 8, TPU, 4, {**TPU_V5P, "cloud.google.com/gke-tpu-topology": "2x4x4"})],
        [
            *admitted(at(20, "01:40:00"), "tpu-v5p-cq"),
            condition("Evicted", "False", "QuotaReserved", previously, at(20, "01:40:00")),
            condition("Requeued", "True", "NodeFailures", previously[12:], at(20, "01:18:05")),
            finished(at(20, "05:00:00")),
        ],
        queue="lm-queue",
        admission=admission("tpu-v5p-cq", ("workers", 8, TPU, "tpu-v5p-2x4x4", 32)),
        evictions=[("NodeFailures", 1)],
    )


def gemma(hour: int) -> dict[str, Any]:
    """5. A JobSet that restarts twice while admitted; a CPU driver pod set."""
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-nlp",
        GEMMA,
        (*JOBSET_OWNER, "gemma-sft"),
        at(20, "05:50:00"),
        [
            podset("driver", 1, None, 0, {}),
            podset("workers", 4, GPU, 8, {GPU_NODE: "nvidia-h200-141gb"}),
        ],
        [*admitted(at(20, "06:00:00"), "h200-cq"), finished(at(20, "10:00:00"))],
        queue="nlp-queue",
        admission=admission(
            "h200-cq",
            ("driver", 1, "cpu", "default-flavor", 8),
            ("workers", 4, GPU, "h200-141gb", 32),
        ),
    )


def sweep(hour: int) -> dict[str, Any]:
    """6. Partial admission: a batch Job of 8 pods (minCount 4) admitted with 4, 09:00-12:40."""
    conditions = admitted(at(20, "09:00:00"), "gpu-cq")
    if hour == FOUR:
        conditions.append(
            condition(
                "Finished", "True", "Succeeded", "Job finished successfully", at(20, "12:40:00")
            )
        )
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-rec",
        SWEEP,
        (*JOB_OWNER, "sweep-shard"),
        at(20, "08:45:00"),
        [podset("main", 8, GPU, 8, H100, min_count=4, jobset=False)],
        conditions,
        queue="rec-queue",
        admission=admission("gpu-cq", ("main", 4, GPU, "h100-80gb", 32)),
    )


GRID_PENDING = pending("main", GPU, "h100-80gb", 16)


def grid(hour: int) -> dict[str, Any] | None:
    """7. Partial admission refused: even minCount 6 does not fit; deactivated at 15:00."""
    if hour == NOON:
        return None
    return workload(
        KUEUE_V1,
        "team-rec",
        GRID,
        (*JOB_OWNER, "grid-search"),
        at(20, "12:10:00"),
        [podset("main", 8, GPU, 8, H100, min_count=6, jobset=False)],
        [
            condition("QuotaReserved", "False", "Pending", GRID_PENDING, at(20, "12:10:01")),
            condition(
                "Evicted", "True", "Deactivated", "The workload is deactivated", at(20, "15:00:00")
            ),
            condition(
                "Requeued",
                "False",
                "Deactivated",
                "The workload is deactivated",
                at(20, "15:00:00"),
            ),
        ],
        queue="rec-queue",
        active=False,
    )


def vit(hour: int) -> dict[str, Any] | None:
    """8. A TPU v6e job still running when the 16:00 export was taken."""
    if hour == NOON:
        return None
    return workload(
        KUEUE_V1,
        "team-vision",
        VIT,
        (*JOBSET_OWNER, "vit-pretrain"),
        at(20, "14:00:00"),
        [
            podset(
                "workers",
                2,
                TPU,
                4,
                {TPU_NODE: "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"},
            )
        ],
        [
            *admitted(at(20, "14:00:03"), "tpu-v6e-cq"),
            condition(
                "PodsReady", "True", "Started", "All pods reached readiness", at(20, "14:02:00")
            ),
        ],
        queue="vision-queue",
        admission=admission("tpu-v6e-cq", ("workers", 2, TPU, "tpu-v6e-2x4", 8)),
    )


PODS_READY_TIMEOUT = "Exceeded the PodsReady timeout team-vision/" + DETR


def detr(hour: int) -> dict[str, Any]:
    """9. A pod that never gets a node (an untolerated taint on the only free H100 node): Kueue
    evicts at 10:30 for PodsReadyTimeout (waitForPodsReady, 10 min), admits again at 10:41."""
    previously = f"Previously: {PODS_READY_TIMEOUT}"
    return workload(
        KUEUE_V2 if hour == NOON else KUEUE_V1,
        "team-vision",
        DETR,
        (*JOBSET_OWNER, "detr-train"),
        at(20, "10:15:00"),
        [podset("workers", 4, GPU, 8, H100)],
        [
            *admitted(at(20, "10:41:00"), "gpu-cq"),
            condition("Evicted", "False", "QuotaReserved", previously, at(20, "10:41:00")),
            condition(
                "Requeued", "True", "BackoffFinished", "backoff finished", at(20, "10:40:55")
            ),
            condition(
                "PodsReady", "True", "PodsReady", "All pods reached readiness", at(20, "10:41:48")
            ),
            finished(at(20, "11:55:00")),
        ],
        queue="vision-queue",
        admission=admission("gpu-cq", ("workers", 4, GPU, "h100-80gb", 32)),
        evictions=[("PodsReadyTimeout", 1)],
    )


def t5(hour: int) -> dict[str, Any] | None:
    """10. A node lost under a JobSet: one of its 8 H100 nodes stops answering at 14:10:03; the
    taint manager deletes its pod at 14:15:03, the Job fails and the JobSet restarts (14:15:05);
    the new pods are bound by 14:19:31 (the last waited for a new node). Kueue's admission
    holds throughout."""
    if hour == NOON:
        return None
    return workload(
        KUEUE_V1,
        "team-lm",
        T5,
        (*JOBSET_OWNER, "t5-xxl"),
        at(20, "12:50:00"),
        [podset("workers", 8, GPU, 8, H100)],
        [*admitted(at(20, "13:00:00"), "gpu-cq"), finished(at(20, "15:40:00"))],
        queue="lm-queue",
        admission=admission("gpu-cq", ("workers", 8, GPU, "h100-80gb", 64)),
    )


SCENARIOS = (llama, bert, urgent, mixtral, gemma, sweep, grid, vit, detr, t5)


def record_events() -> dict[str, list[dict[str, Any]]]:
    """Every event of the day, as the exporter saw them; returns the series' later versions."""
    versions: dict[str, list[dict[str, Any]]] = {}
    # 1. llama-pretrain: Kueue retries and says why it waits, as one series of Pending events.
    ref = wl_ref("team-lm", LLAMA)
    waiting = EVENTS.add(
        ref,
        "Pending",
        pending("workers", TPU, "tpu-v5p-2x2x4", 16),
        at(20, "08:00:00", 510000),
        kind="Warning",
    )
    versions[waiting["metadata"]["uid"]] = series_versions(
        waiting,
        (2, at(20, "08:00:10", 210000)),
        (11, at(20, "08:30:10", 210000)),
        (19, at(20, "09:00:10", 210000)),
    )
    admit_events(ref, "tpu-v5p-cq", at(20, "09:30:00"), 5400, 310000)
    js = js_ref("team-lm", "llama-pretrain")
    EVENTS.add(
        js,
        "Started",
        "Admitted by clusterQueue tpu-v5p-cq",
        at(20, "09:30:00", 450000),
        component="kueue-jobset-controller",
    )
    finished_event(js, f"team-lm/{LLAMA}", at(20, "13:30:00", 600000))
    # 2, 3. bert-finetune is preempted by urgent-eval at 11:00.
    ref, js = wl_ref("team-nlp", BERT), js_ref("team-nlp", "bert-finetune")
    admit_events(ref, "gpu-cq", at(20, "10:00:05"), 5, 250000)
    urgent_ref = wl_ref("team-safety", URGENT)
    EVENTS.add(
        urgent_ref,
        "Pending",
        pending("eval", GPU, "h100-80gb", 16),
        at(20, "10:59:55", 810000),
        kind="Warning",
    )
    EVENTS.add(ref, "EvictedDueToPreempted", PREEMPTION, at(20, "11:00:00", 200000))
    effective = (
        "; preemptor effective priority: 1000 (base: 1000, boost: 0); "
        "preemptee effective priority: 100 (base: 100, boost: 0)"
    )
    EVENTS.add(ref, "Preempted", PREEMPTION + effective, at(20, "11:00:00", 210000))
    EVENTS.add(
        urgent_ref,
        "PreemptedWorkload",
        f"Preempted workload team-nlp/{BERT} (UID: {uid(BERT)}) in ClusterQueue gpu-cq" + effective,
        at(20, "11:00:00", 220000),
    )
    EVENTS.add(
        js, "Stopped", PREEMPTION, at(20, "11:00:00", 500000), component="kueue-jobset-controller"
    )
    EVENTS.add(
        ref,
        "Pending",
        pending("trainer", GPU, "h100-80gb", 16),
        at(20, "11:00:41", 100000),
        kind="Warning",
    )
    admit_events(urgent_ref, "gpu-cq", at(20, "11:00:45"), 50, 300000)
    finished_event(
        js_ref("team-safety", "urgent-eval"), f"team-safety/{URGENT}", at(20, "12:29:30", 500000)
    )
    admit_events(ref, "gpu-cq", at(20, "12:30:00"), 5360, 200000)
    finished_event(js, f"team-nlp/{BERT}", at(20, "14:00:00", 400000))
    # 4. mixtral-moe loses a node at 01:17:30.
    ref, js = wl_ref("team-lm", MIXTRAL), js_ref("team-lm", "mixtral-moe")
    admit_events(ref, "tpu-v5p-cq", at(19, "22:05:00"), 300, 500000)
    EVENTS.add(
        ref,
        "EvictedDueToNodeFailures",
        "Workload was evicted as there was no replacement for a failed node: gke-tpu-7f3a-w2kq",
        at(20, "01:17:30", 250000),
    )
    EVENTS.add(
        js,
        "Stopped",
        "Workload was evicted as there was no replacement for a failed node: gke-tpu-7f3a-w2kq",
        at(20, "01:17:30", 600000),
        component="kueue-jobset-controller",
    )
    admit_events(ref, "tpu-v5p-cq", at(20, "01:40:00"), 1315, 300000)
    finished_event(js, f"team-lm/{MIXTRAL}", at(20, "05:00:00", 500000))
    # 5. gemma-sft: two restarts (its Jobs of the second, created 08:20:04, are in jobs.json).
    ref, js = wl_ref("team-nlp", GEMMA), js_ref("team-nlp", "gemma-sft")
    admit_events(ref, "h200-cq", at(20, "06:00:00"), 600, 200000)
    EVENTS.add(
        js,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: gemma-sft-workers-2)",
        at(20, "07:10:00", 150000),
        kind="Warning",
        component="jobset",
    )
    EVENTS.add(
        js,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: gemma-sft-workers-1)",
        at(20, "08:20:00", 150000),
        kind="Warning",
        component="jobset",
    )
    finished_event(js, f"team-nlp/{GEMMA}", at(20, "10:00:00", 400000))
    # 6. sweep-shard: partially admitted.
    admit_events(wl_ref("team-rec", SWEEP), "gpu-cq", at(20, "09:00:00"), 900, 300000)
    finished_event(
        ("batch/v1", "Job", "team-rec", "sweep-shard"),
        f"team-rec/{SWEEP}",
        at(20, "12:40:00", 500000),
    )
    # 7. grid-search: refused until deactivated.
    ref = wl_ref("team-rec", GRID)
    refused = EVENTS.add(ref, "Pending", GRID_PENDING, at(20, "12:10:01", 100000), kind="Warning")
    versions[refused["metadata"]["uid"]] = series_versions(
        refused,
        (2, at(20, "12:10:11", 100000)),
        (9, at(20, "12:40:11", 100000)),
        (40, at(20, "14:59:41", 400000)),
    )
    EVENTS.add(
        ref, "EvictedDueToDeactivated", "The workload is deactivated", at(20, "15:00:00", 200000)
    )
    # 8. vit-pretrain: admitted at once.
    admit_events(wl_ref("team-vision", VIT), "tpu-v6e-cq", at(20, "14:00:03"), 3, 300000)
    # 9. detr-train: evicted for PodsReadyTimeout at 10:30, admitted again 10:41.
    ref, js = wl_ref("team-vision", DETR), js_ref("team-vision", "detr-train")
    admit_events(ref, "gpu-cq", at(20, "10:20:00"), 300, 100000)
    EVENTS.add(ref, "EvictedDueToPodsReadyTimeout", PODS_READY_TIMEOUT, at(20, "10:30:00", 200000))
    EVENTS.add(
        js,
        "Stopped",
        PODS_READY_TIMEOUT,
        at(20, "10:30:00", 500000),
        component="kueue-jobset-controller",
    )
    admit_events(ref, "gpu-cq", at(20, "10:41:00"), 660, 200000)
    finished_event(js, f"team-vision/{DETR}", at(20, "11:55:00", 300000))
    # 10. t5-xxl: the JobSet restarts after losing a node; Kueue's admission stays.
    ref, js = wl_ref("team-lm", T5), js_ref("team-lm", "t5-xxl")
    admit_events(ref, "gpu-cq", at(20, "13:00:00"), 600, 100000)
    EVENTS.add(
        js,
        "RestartJobSetFailurePolicyAction",
        "applying RestartJobSet failure policy action (first failed job: t5-xxl-workers-1)",
        at(20, "14:15:05", 300000),
        kind="Warning",
        component="jobset",
    )
    finished_event(js, f"team-lm/{T5}", at(20, "15:40:00", 400000))
    return versions


# ---------------------------------------------------------------------------------------------
# The pods: each scenario's pods, as kubectl and the event exporter saw them (kubernetes_pods.py
# writes the objects and events). Times on the 20th: `HH:MM:SS.ffffff`.


def t20(clock: str) -> str:
    whole, _, fraction = clock.partition(".")
    return at(20, whole, int(fraction.ljust(6, "0")) if fraction else 0)


def gang(
    namespace: str,
    owner: str,
    rjob: str | None,
    shape: tuple[int, int],
    attempt: int,
    seed: str,
    per_pod: tuple[str | None, int, dict[str, str]],
    created: str,
    bound: list[str | None],
    ends: list[tuple[str | None, str]],
    nodes: str,
) -> list[Pod]:
    """The pods of one incarnation of a JobSet's replicated job (`shape`: Jobs x pods each), or
    of a batch Job (`rjob` None), in order of Job and completion index."""
    resource, chips, selector = per_pod
    out = []
    for n, ((job, index), moment, (end, how)) in enumerate(
        zip(
            [(j, i) for j in range(shape[0]) for i in range(shape[1])],
            bound,
            ends,
            strict=True,
        )
    ):
        out.append(
            Pod(
                namespace=namespace,
                owner=owner,
                rjob=rjob,
                job_index=job,
                index=index,
                attempt=attempt,
                seed=f"{seed}/{job}/{index}",
                resource=resource,
                chips=chips,
                selector=selector,
                created=t20(created),
                bound=None if moment is None else t20(moment),
                node=None if moment is None else f"{nodes}-{n}",
                end=None if end is None else t20(end),
                how=how,
            )
        )
    return out


V5P_2X2X4 = (TPU, 4, {**TPU_V5P, "cloud.google.com/gke-tpu-topology": "2x2x4"})
V5P_2X4X4 = (TPU, 4, {**TPU_V5P, "cloud.google.com/gke-tpu-topology": "2x4x4"})
H100_8 = (GPU, 8, H100)
H200_8 = (GPU, 8, {GPU_NODE: "nvidia-h200-141gb"})
V6E_2X4 = (TPU, 4, {TPU_NODE: "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"})
CPU = (None, 0, {})


def every(n: int, end: str | None, how: str) -> list[tuple[str | None, str]]:
    return [(end, how)] * n


def t5_owned(pods: list[Pod]) -> list[Pod]:
    """t5's owner is named only on its pods (the JobSet's pod template carries the label)."""
    return [replace(p, labels={OWNER: "carol"}) for p in pods]


def scenario_pods() -> list[Pod]:
    """Every pod of the day's Workloads but urgent-eval's (its namespace, team-safety, is not in
    the pod exports nor the event exporter's filter: its allocation is Kueue's admission) and
    mixtral-moe's first admission's (on the 19th, before the exporter's file)."""
    killed = "killed"
    return [
        # 1. llama: bound 17 to 58 s after its 09:30 admission.
        *gang("team-lm", "llama-pretrain", "workers", (1, 4), 0, "llama", V5P_2X2X4,
              "09:30:01", ["09:30:17.412", "09:30:21.105", "09:30:33.65", "09:30:58.23"],
              [("13:29:55", "done"), ("13:29:55", "done"), ("13:29:56", "done"),
               ("13:29:56", "done")], "gke-tpu-v5p-a"),
        # 2. bert: killed at the preemption (11:00:01), bound again after the 12:30 admission.
        *gang("team-nlp", "bert-finetune", "trainer", (1, 2), 0, "bert-1", H100_8, "10:00:06",
              ["10:00:22.3", "10:00:31.7"], every(2, "11:00:01", killed), "gke-h100-a"),
        *gang("team-nlp", "bert-finetune", "trainer", (1, 2), 0, "bert-2", H100_8, "12:30:01",
              ["12:30:18.5", "12:30:26.9"], [("13:59:57", "done"), ("13:59:58", "done")],
              "gke-h100-c"),
        # 4. mixtral: its second admission's pods.
        *gang("team-lm", "mixtral-moe", "workers", (2, 4), 0, "mixtral-2", V5P_2X4X4, "01:40:01",
              ["01:40:19.2", "01:40:22.8", "01:40:25.1", "01:40:31.6", "01:40:37.3",
               "01:40:44.9", "01:40:52", "01:41:00.4"], every(8, "04:59:55", "done"),
              "gke-tpu-v5p-b"),
        # 5. gemma: three incarnations (two JobSet restarts), each with its CPU driver.
        *gang("team-nlp", "gemma-sft", "driver", (1, 1), 0, "gemma-d0", CPU, "06:00:01",
              ["06:00:15"], every(1, "07:10:01", killed), "gke-cpu"),
        *gang("team-nlp", "gemma-sft", "workers", (1, 4), 0, "gemma-w0", H200_8, "06:00:01",
              ["06:00:20.1", "06:00:24.2", "06:00:28.3", "06:00:40.4"],
              every(4, "07:10:01", killed), "gke-h200-a"),
        *gang("team-nlp", "gemma-sft", "driver", (1, 1), 1, "gemma-d1", CPU, "07:10:03",
              ["07:10:20"], every(1, "08:20:01", killed), "gke-cpu"),
        *gang("team-nlp", "gemma-sft", "workers", (1, 4), 1, "gemma-w1", H200_8, "07:10:03",
              ["07:10:25.5", "07:10:29.5", "07:10:33.5", "07:10:50.5"],
              every(4, "08:20:01", killed), "gke-h200-a"),
        *gang("team-nlp", "gemma-sft", "driver", (1, 1), 2, "gemma-d2", CPU, "08:20:05",
              ["08:20:18"], every(1, "09:59:59", "done"), "gke-cpu"),
        *gang("team-nlp", "gemma-sft", "workers", (1, 4), 2, "gemma-w2", H200_8, "08:20:04",
              ["08:20:20.6", "08:20:24.6", "08:20:28.6", "08:20:44.6"],
              every(4, "09:59:58", "done"), "gke-h200-a"),
        # 6. sweep: 4 pods of a batch Job admitted with 4 of its 8.
        *gang("team-rec", "sweep-shard", None, (1, 4), 0, "sweep", H100_8, "09:00:01",
              ["09:00:20.5", "09:00:23.5", "09:00:27.5", "09:00:31.5"],
              every(4, "12:39:58", "done"), "gke-h100-b"),
        # 8. vit: still running at 16:00.
        *gang("team-vision", "vit-pretrain", "workers", (1, 2), 0, "vit", V6E_2X4, "14:00:04",
              ["14:00:21.3", "14:00:24.8"], every(2, None, "running"), "gke-tpu-v6e-a"),
        # 9. detr: its fourth pod is never bound; PodsReadyTimeout at 10:30.
        *gang("team-vision", "detr-train", "workers", (1, 4), 0, "detr-1", H100_8, "10:20:01",
              ["10:20:18.2", "10:20:22.9", "10:20:30.4", None],
              [*every(3, "10:30:01", killed), ("10:30:01", "pending")], "gke-h100-d"),
        *gang("team-vision", "detr-train", "workers", (1, 4), 0, "detr-2", H100_8, "10:41:01",
              ["10:41:19.6", "10:41:23.1", "10:41:27.7", "10:41:41.2"],
              every(4, "11:54:58", "done"), "gke-h100-d"),
        # 10. t5: pod 1 of Job 1 loses its node at 14:10:03; the JobSet restarts at 14:15:05.3.
        *t5_owned(gang("team-lm", "t5-xxl", "workers", (2, 4), 0, "t5-0", H100_8, "13:00:01",
              ["13:00:17.1", "13:00:20.4", "13:00:23.8", "13:00:27.2", "13:00:31.5",
               "13:00:35.9", "13:00:40.3", "13:00:44.9"],
              [*every(5, "14:15:06", killed), ("14:10:03", "lost"),
               *every(2, "14:15:06", killed)], "gke-h100-b")),
        *t5_owned(gang("team-lm", "t5-xxl", "workers", (2, 4), 1, "t5-1", H100_8, "14:15:08",
              ["14:15:26.4", "14:15:30.2", "14:15:34.1", "14:15:38.7", "14:15:42.3",
               "14:19:31.6", "14:15:47.6", "14:15:55"], every(8, "15:39:57", "done"),
              "gke-h100-e")),
    ]  # fmt: skip


def other_events() -> list[dict[str, Any]]:
    """Events the exporter saw that are about no Workload's job: a node lost and one added,
    the kubelet on a logging agent's pod; and the Job controller's on a JobSet's failed Job."""
    node = {"apiVersion": "v1", "kind": "Node", "name": "gke-h100-b-5", "uid": uid("node-b-5")}
    added = {"apiVersion": "v1", "kind": "Node", "name": "gke-h100-e-5", "uid": uid("node-e-5")}
    agent = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "fluentbit-gke-x7k2p",
        "namespace": "kube-system",
        "uid": uid("fluentbit"),
    }
    failed = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "t5-xxl-workers-1",
        "namespace": "team-lm",
        "uid": uid("t5-xxl-workers-1/0"),
    }
    return [
        core_event(node, "NodeNotReady", "Node gke-h100-b-5 status is now: NodeNotReady",
                   when(t20("14:10:03")), "node-controller"),
        core_event(added, "RegisteredNode",
                   "Node gke-h100-e-5 event: Registered Node gke-h100-e-5 in Controller",
                   when(t20("14:18:50")), "node-controller"),
        core_event(agent, "Started", "Started container fluentbit", when(t20("14:19:02")),
                   "kubelet", host="gke-h100-e-5"),
        core_event(failed, "BackoffLimitExceeded", "Job has reached the specified backoff limit",
                   when(t20("14:15:04")), "job-controller", warning=True),
    ]  # fmt: skip


def pod_event(namespace: str, pod: str, reason: str, message: str, when: str) -> dict[str, Any]:
    """A kubelet event in its core/v1 form (the old recorder: first/lastTimestamp, count)."""
    return {
        "apiVersion": "v1",
        "count": 1,
        "eventTime": None,
        "firstTimestamp": when,
        "involvedObject": {
            "apiVersion": "v1",
            "fieldPath": "spec.containers{main}",
            "kind": "Pod",
            "name": pod,
            "namespace": namespace,
            "uid": uid(pod),
        },
        "kind": "Event",
        "lastTimestamp": when,
        "message": message,
        "metadata": {
            "creationTimestamp": when,
            "name": f"{pod}.{digits(pod + reason, 16)}",
            "namespace": namespace,
            "uid": uid(pod + reason),
        },
        "reason": reason,
        "reportingComponent": "kubelet",
        "reportingInstance": "gke-cpu-pool-3f2a-x8kq",
        "source": {"component": "kubelet", "host": "gke-cpu-pool-3f2a-x8kq"},
        "type": "Normal",
    }


def hostile_objects() -> list[dict[str, Any]]:
    """One unusable object per reason (the test lists them by position)."""
    h100 = [podset("main", 2, GPU, 8, H100)]

    def broken(
        name: str, podsets: list[dict[str, Any]], conditions: list[dict[str, Any]], **kw: Any
    ) -> dict[str, Any]:
        return workload(
            KUEUE_V1,
            "team-x",
            name,
            (*JOBSET_OWNER, name[7:-6]),
            at(20, "15:00:00"),
            podsets,
            conditions,
            queue="x",
            **kw,
        )

    no_created = broken("jobset-no-created-00001", h100, [])
    del no_created["metadata"]["creationTimestamp"]
    bad_time = broken("jobset-bad-time-00007", h100, [])
    bad_time["metadata"]["creationTimestamp"] = "yesterday"
    bad_count = broken("jobset-bad-count-00008", [podset("main", 2, GPU, 8, H100)], [])
    bad_count["spec"]["podSets"][0]["count"] = "eight"
    plain_job = child_job("team-x", "none", "main", 0, 0, at(20, "15:00:00"))
    plain_job["metadata"]["labels"] = {"app": "plain"}
    return [
        {
            "apiVersion": "v1",
            "data": {"k": "v"},
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "team-x"},
        },
        no_created,
        broken(
            "jobset-l4-serve-00002",
            [podset("main", 2, GPU, 1, {GPU_NODE: "nvidia-l4"})],
            admitted(at(20, "15:00:05"), "l4-cq"),
            admission=admission("l4-cq", ("main", 2, GPU, "l4", 2)),
        ),
        broken("jobset-cpu-etl-00003", [podset("main", 4, None, 0, {})], []),
        broken("jobset-anygpu-00004", [podset("main", 2, GPU, 8, {})], []),
        broken(
            "jobset-lost-history-00005",
            h100,
            admitted(at(20, "15:10:00"), "gpu-cq"),
            evictions=[("Preempted", 2)],
        ),
        broken(
            "jobset-bogus-finish-00006",
            h100,
            [condition("Finished", "True", "Bogus", "?", at(20, "15:30:00"))],
        ),
        plain_job,
        bad_time,
        bad_count,
        broken("jobset-early-evict-00009", h100, admitted(at(20, "15:40:00"), "gpu-cq")),
    ]


def hostile_lines() -> list[str]:
    """An exporter's file with one unusable line per reason."""
    ghost = Events()
    lost, early = (
        wl_ref("team-x", "jobset-lost-history-00005"),
        wl_ref("team-x", "jobset-early-evict-00009"),
    )
    no_reason = ghost.add(
        lost, "Admitted", "Admitted by ClusterQueue gpu-cq", at(20, "15:10:00", 300000)
    )
    del no_reason["reason"]
    events = [
        pod_event("team-x", "web-0", "Killing", "Stopping container main", at(20, "15:05:00")),
        ghost.add(
            wl_ref("team-lm", "jobset-ghost-00000"),
            "Admitted",
            "Admitted by ClusterQueue lm-cq",
            at(20, "15:06:00", 1),
        ),
        no_reason,
        ghost.add(lost, "Admitted", "Admitted by ClusterQueue gpu-cq", at(20, "15:10:00", 300000)),
        ghost.add(
            early,
            "EvictedDueToPreempted",
            "Preempted to accommodate a workload",
            at(20, "15:20:00", 200000),
        ),
    ]
    compact = [json.dumps(e, separators=(",", ":")) for e in events]
    return [
        '{"apiVersion":"v1","kind":"Event","involvedObject":{"kind":"Workload","name":"jobset-broken',
        compact[0],
        compact[1],
        "42",
        '{"metadata":{"name":"x"}}',
        *compact[2:],
    ]


def written_at(event: dict[str, Any]) -> str:
    series = event.get("series")
    return series["lastObservedTime"] if series else event["eventTime"] or event["lastTimestamp"]


OWNER = "ml.example.com/owner"  # a label the fleet puts on jobs (--owner-label)


def jobsets_at_four() -> list[dict[str, Any]]:
    llama = jobset_object("team-lm", "llama-pretrain", at(20, "08:00:00"), 0, at(20, "13:30:00"))
    llama["metadata"]["labels"][OWNER] = "alice"
    return [
        llama,
        jobset_object("team-nlp", "bert-finetune", at(20, "10:00:00"), 0, at(20, "14:00:00")),
        jobset_object("team-safety", "urgent-eval", at(20, "10:59:55"), 0, at(20, "12:29:30")),
        jobset_object("team-lm", "mixtral-moe", at(19, "22:00:00"), 0, at(20, "05:00:00")),
        jobset_object("team-nlp", "gemma-sft", at(20, "05:50:00"), 2, at(20, "10:00:00")),
        jobset_object("team-vision", "vit-pretrain", at(20, "14:00:00"), 0, None),
        jobset_object("team-vision", "notebook-scratch", at(20, "09:00:00"), 0, None),
        jobset_object("team-vision", "detr-train", at(20, "10:15:00"), 0, at(20, "11:55:00")),
        jobset_object("team-lm", "t5-xxl", at(20, "12:50:00"), 1, at(20, "15:40:00")),
    ]


def jobs_at_four() -> list[dict[str, Any]]:
    return [
        child_job("team-lm", "llama-pretrain", "workers", 0, 0, at(20, "08:00:00")),
        child_job("team-nlp", "bert-finetune", "trainer", 0, 0, at(20, "12:30:00")),
        child_job("team-safety", "urgent-eval", "eval", 0, 0, at(20, "10:59:55")),
        child_job("team-lm", "mixtral-moe", "workers", 0, 0, at(19, "22:00:00")),
        child_job("team-lm", "mixtral-moe", "workers", 1, 0, at(19, "22:00:00")),
        child_job("team-nlp", "gemma-sft", "driver", 0, 2, at(20, "08:20:05")),
        child_job("team-nlp", "gemma-sft", "workers", 0, 2, at(20, "08:20:04")),
        child_job("team-vision", "vit-pretrain", "workers", 0, 0, at(20, "14:00:00")),
        child_job("team-vision", "detr-train", "workers", 0, 0, at(20, "10:41:00")),
        child_job("team-lm", "t5-xxl", "workers", 0, 1, at(20, "14:15:08")),
        child_job("team-lm", "t5-xxl", "workers", 1, 1, at(20, "14:15:08")),
    ]


def prometheus(hour: datetime) -> dict[str, Any]:
    """A monitoring pod of no Workload (a StatefulSet's), running all day."""
    pod = pod_object(
        Pod("team-vision", "prometheus", None, 0, 0, 0, "prometheus", None, 0, {},
            at(19, "08:00:00"), at(19, "08:00:02"), "gke-cpu-pool-3f2a-x8kq", None, "running"),
        hour,
    )  # fmt: skip
    pod["metadata"] |= {
        "name": "prometheus-0",
        "generateName": "prometheus-",
        "labels": {"app": "prometheus", "statefulset.kubernetes.io/pod-name": "prometheus-0"},
        "ownerReferences": [
            {"apiVersion": "apps/v1", "controller": True, "kind": "StatefulSet",
             "name": "prometheus", "uid": uid("prometheus-sts")}
        ],
    }  # fmt: skip
    del pod["metadata"]["annotations"]
    return pod


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main() -> None:
    """The day's exports in two folders, as a daily job that runs at 12:00 and 16:00 leaves
    them: each folder is one import's input (imported together, or one after the other)."""
    versions = record_events()
    pods = scenario_pods()
    noon_at, four_at = (datetime.fromisoformat(at(20, f"{h}:00:00")) for h in (NOON, FOUR))
    am, pm = OUT / "day-1200", OUT / "day-1600"
    for hour, folder, moment in ((NOON, am, noon_at), (FOUR, pm, four_at)):
        found = [w for w in (s(hour) for s in SCENARIOS) if w is not None]
        write(folder / "workloads.json", kubectl_list(found) + "\n")
        shown = [pod_object(p, moment) for p in pods if p.exists_at(moment)]
        write(folder / "pods.json", kubectl_list([*shown, prometheus(moment)]) + "\n")
    about_pods = [e for p in pods for e in pod_events(p)]
    exported = sorted(
        [*EVENTS.all, *(v for vs in versions.values() for v in vs), *about_pods, *other_events()],
        key=written_at,
    )
    before = [e for e in exported if datetime.fromisoformat(written_at(e)) < noon_at]
    after = [e for e in exported if datetime.fromisoformat(written_at(e)) >= noon_at]
    for folder, part in ((am, before), (pm, after)):
        write(
            folder / "exporter.jsonl",
            "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in part),
        )
    latest = {e["metadata"]["uid"]: e for e in exported}  # each event's last version
    ttl = datetime.fromisoformat(at(20, "15:00:00"))  # the default 1 h TTL, at 16:00
    kept = [e for e in latest.values() if datetime.fromisoformat(written_at(e)) >= ttl]
    kept += [
        pod_event(
            "team-vision",
            "prometheus-0",
            "Pulled",
            "Container image already present",
            at(20, "15:30:00"),
        ),
        pod_event(
            "team-vision", "prometheus-0", "Started", "Started container main", at(20, "15:30:01")
        ),
    ]
    write(pm / "events.json", kubectl_list(kept) + "\n")
    write(pm / "jobsets.json", kubectl_list(jobsets_at_four()) + "\n")
    write(pm / "jobs.json", kubectl_list(jobs_at_four()) + "\n")
    flavors = [resource_flavor(n, labels) for n, labels in FLAVORS.items()]
    write(am / "resourceflavors.json", kubectl_list(flavors) + "\n")
    write(OUT / "hostile" / "objects.json", kubectl_list(hostile_objects()) + "\n")
    write(OUT / "hostile" / "exporter.jsonl", "\n".join(hostile_lines()) + "\n")


if __name__ == "__main__":
    main()
