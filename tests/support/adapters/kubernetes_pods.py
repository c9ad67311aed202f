"""The pods of the Kubernetes fixture day (tests/fixtures/adapters/kubernetes/), and the events
about them, as a GKE cluster's API server holds them: `kubectl get pods -A -o json` at a given
hour, and the events the scheduler, the kubelet, the node lifecycle and taint eviction
controllers and the Job controller emit.

Written by hand to the published types and emitters (kubernetes/api v0.36.3 core/v1/types.go:
Pod, PodStatus, ContainerStatus, PodCondition; kubernetes/kubernetes: the scheduler's `Scheduled`
and `FailedScheduling` (events.k8s.io recorder: `eventTime`, `series`), the kubelet's `Pulled`,
`Created`, `Started`, `Killing` ("Stopping container main"), pkg/controller/util/node's
`NodeNotReady` ("Node is not ready") on each pod of a lost node, the taint eviction controller's
`TaintManagerEviction` ("Marking for deletion Pod ns/name", its reference without a uid), the Job
controller's `SuccessfulCreate` ("Created pod: name"); the older recorder writes
`firstTimestamp` / `lastTimestamp` / `count`, to the second). A pod's name is its Job's and its
completion index with the API server's random suffix (JobSet Jobs are
`<JobSet>-<replicated job>-<index>`); its labels are the Job controller's, JobSet's
(`jobset-name`, `replicatedjob-name`, `job-index`, `restart-attempt`, `jobset-uid`) and Kueue's
(`kueue.x-k8s.io/podset`).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.String
TPU, GPU = "google.com/tpu", "nvidia.com/gpu"


def uid(name: str) -> str:
    """The fixture's uid of the object `name` (the same wherever that object is named)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"mpg-fixture/{name}"))


def suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:5])


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def stamp(moment: datetime, micros: bool = False) -> str:
    """RFC 3339 in UTC: whole seconds (metav1.Time), or microseconds (metav1.MicroTime)."""
    if micros:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Pod:
    """One pod's life. `bound`: the scheduler's binding (microseconds), None if never bound;
    `end`: when it stopped, and `how`: `done` (its containers finished), `killed` (the kubelet
    stopped it: a preemption, an eviction, a JobSet restart), `lost` (its node stopped
    answering at `end`; the taint manager deleted it 300 s later), `pending` (never bound,
    deleted at `end`), `running` (still running)."""

    namespace: str
    owner: str  # the JobSet, or the batch Job
    rjob: str | None  # the JobSet's replicated job; None for a batch Job's pod
    job_index: int
    index: int  # completion index within its Job
    attempt: int  # JobSet restart attempt
    seed: str  # makes the name's suffix: one per incarnation
    resource: str | None
    chips: int
    selector: dict[str, str]
    created: str
    bound: str | None
    node: str | None
    end: str | None
    how: str
    queue: str = "lq"
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def job(self) -> str:
        return f"{self.owner}-{self.rjob}-{self.job_index}" if self.rjob else self.owner

    @property
    def name(self) -> str:
        return f"{self.job}-{self.index}-{suffix(self.seed)}"

    @property
    def deleted(self) -> datetime | None:
        """When the API server removed it: a stopped pod at once (after its grace period), a
        lost one once the taint manager deletes it; a finished one stays."""
        if self.end is None or self.how in ("done", "running"):
            return None
        if self.how == "lost":
            return when(self.end) + timedelta(seconds=301)
        return when(self.end) + timedelta(seconds=2)

    def exists_at(self, hour: datetime) -> bool:
        return when(self.created) <= hour and (self.deleted is None or self.deleted > hour)


def _condition(kind: str, status: str, moment: datetime, reason: str | None = None) -> dict:
    out: dict[str, Any] = {
        "lastProbeTime": None,
        "lastTransitionTime": stamp(moment),
        "status": status,
        "type": kind,
    }
    if reason is not None:
        out["reason"] = reason
    return out


def pod_object(pod: Pod, hour: datetime) -> dict[str, Any]:
    """The pod as `kubectl get pods -o json` shows it at `hour`."""
    created = when(pod.created)
    labels = {
        "batch.kubernetes.io/controller-uid": uid(f"{pod.job}/{pod.attempt}"),
        "batch.kubernetes.io/job-completion-index": str(pod.index),
        "batch.kubernetes.io/job-name": pod.job,
        "controller-uid": uid(f"{pod.job}/{pod.attempt}"),
        "job-name": pod.job,
        "kueue.x-k8s.io/podset": pod.rjob or "main",
        **pod.labels,
    }
    if pod.rjob is not None:
        labels |= {
            "jobset.sigs.k8s.io/job-index": str(pod.job_index),
            "jobset.sigs.k8s.io/jobset-name": pod.owner,
            "jobset.sigs.k8s.io/jobset-uid": uid(pod.owner),
            "jobset.sigs.k8s.io/replicatedjob-name": pod.rjob,
            "jobset.sigs.k8s.io/restart-attempt": str(pod.attempt),
        }
    resources: dict[str, Any] = {"limits": {}, "requests": {"cpu": "8", "memory": "32Gi"}}
    if pod.resource is not None:
        resources["limits"][pod.resource] = resources["requests"][pod.resource] = str(pod.chips)
    spec: dict[str, Any] = {
        "containers": [
            {
                "image": "us-docker.pkg.dev/ml/train:2026.11",
                "imagePullPolicy": "IfNotPresent",
                "name": "main",
                "resources": resources,
            }
        ],
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 30,
    }
    if pod.selector:
        spec["nodeSelector"] = pod.selector
    status: dict[str, Any] = {"qosClass": "Burstable"}
    bound = when(pod.bound) if pod.bound is not None else None
    if bound is None or bound > hour:
        status |= {
            "phase": "Pending",
            "conditions": [_condition("PodScheduled", "False", created, "Unschedulable")],
        }
    else:
        spec["nodeName"] = pod.node
        started = bound + timedelta(seconds=6)
        finished = pod.how == "done" and pod.end is not None and when(pod.end) <= hour
        state: dict[str, Any] = {"running": {"startedAt": stamp(started)}}
        ready = _condition("Ready", "True", started + timedelta(seconds=1))
        if finished:
            end = when(pod.end or "")
            state = {
                "terminated": {
                    "containerID": f"containerd://{uid(pod.seed).replace('-', '')}",
                    "exitCode": 0,
                    "finishedAt": stamp(end),
                    "reason": "Completed",
                    "startedAt": stamp(started),
                }
            }
            ready = _condition("Ready", "False", end, "PodCompleted")
        status |= {
            "conditions": [
                _condition("PodReadyToStartContainers", "True", started),
                _condition("Initialized", "True", bound + timedelta(seconds=1)),
                ready,
                {**ready, "type": "ContainersReady"},
                _condition("PodScheduled", "True", bound),
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{uid(pod.seed).replace('-', '')}",
                    "image": "us-docker.pkg.dev/ml/train:2026.11",
                    "imageID": "us-docker.pkg.dev/ml/train@sha256:" + "7" * 64,
                    "lastState": {},
                    "name": "main",
                    "ready": not finished,
                    "restartCount": 0,
                    "started": not finished,
                    "state": state,
                }
            ],
            "hostIP": "10.128.0.17",
            "phase": "Succeeded" if finished else "Running",
            "podIP": "10.64.3.21",
            "startTime": stamp(bound + timedelta(seconds=1)),
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": {"batch.kubernetes.io/job-completion-index": str(pod.index)},
            "creationTimestamp": stamp(created),
            "generateName": f"{pod.job}-{pod.index}-",
            "labels": labels,
            "name": pod.name,
            "namespace": pod.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Job",
                    "name": pod.job,
                    "uid": uid(f"{pod.job}/{pod.attempt}"),
                }
            ],
            "resourceVersion": str(int(hashlib.sha256(pod.seed.encode()).hexdigest()[:6], 16)),
            "uid": uid(pod.seed),
        },
        "spec": spec,
        "status": status,
    }


def event_name(about: str, reason: str, moment: datetime) -> str:
    return f"{about}.{hashlib.sha256(f'{about}{reason}{moment}'.encode()).hexdigest()[:16]}"


def core_event(
    about: dict[str, Any],
    reason: str,
    message: str,
    moment: datetime,
    component: str,
    *,
    host: str | None = None,
    warning: bool = False,
    count: int = 1,
    last: datetime | None = None,
) -> dict[str, Any]:
    """An event of the older (core/v1) recorder: times to the second, a `count`."""
    name = event_name(about["name"], reason, moment)
    source: dict[str, str] = {"component": component}
    if host is not None:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "count": count,
        "eventTime": None,
        "firstTimestamp": stamp(moment),
        "involvedObject": about,
        "kind": "Event",
        "lastTimestamp": stamp(last or moment),
        "message": message,
        "metadata": {
            "creationTimestamp": stamp(moment),
            "name": name,
            "namespace": about.get("namespace", "default"),
            "uid": uid(name),
        },
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": host or "",
        "source": source,
        "type": "Warning" if warning else "Normal",
    }


def new_event(
    about: dict[str, Any],
    reason: str,
    action: str,
    message: str,
    moment: datetime,
    component: str,
    *,
    warning: bool = False,
    series: tuple[int, datetime] | None = None,
) -> dict[str, Any]:
    """An event of the events.k8s.io recorder as `kubectl get events` shows it (core/v1 form):
    `eventTime` in microseconds, `series` for repeats, no first/last timestamps."""
    name = event_name(about["name"], reason, moment)
    event: dict[str, Any] = {
        "action": action,
        "apiVersion": "v1",
        "eventTime": stamp(moment, micros=True),
        "firstTimestamp": None,
        "involvedObject": about,
        "kind": "Event",
        "lastTimestamp": None,
        "message": message,
        "metadata": {
            "creationTimestamp": stamp(moment),
            "name": name,
            "namespace": about.get("namespace", "default"),
            "uid": uid(name),
        },
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": f"{component}-gke-control-plane",
        "source": {},
        "type": "Warning" if warning else "Normal",
    }
    if series is not None:
        event["series"] = {"count": series[0], "lastObservedTime": stamp(series[1], micros=True)}
    return event


def pod_ref(pod: Pod, *, with_uid: bool = True) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": pod.name,
        "namespace": pod.namespace,
    }
    if with_uid:
        ref["uid"] = uid(pod.seed)
    return ref


def pod_events(pod: Pod) -> list[dict[str, Any]]:
    """Every event about the pod, as the exporter sees them (a series once per version)."""
    out: list[dict[str, Any]] = []
    ref = pod_ref(pod)
    created = when(pod.created)
    if (
        pod.bound is None
        or pod.how == "pending"
        or when(pod.bound) > created + timedelta(seconds=30)
    ):
        waited = when(pod.bound) if pod.bound is not None else when(pod.end or pod.created)
        taint = (
            "0/24 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: "
            "unhealthy}, 23 Insufficient nvidia.com/gpu. preemption: 0/24 nodes are available: "
            "24 No preemption victims found for incoming pod."
        )
        first = created + timedelta(milliseconds=500)
        repeats = max(1, int((waited - first).total_seconds() // 60))
        base = new_event(
            ref, "FailedScheduling", "Scheduling", taint, first, "default-scheduler", warning=True
        )
        out.append(base)
        if repeats > 1:
            out.append(
                {
                    **base,
                    "series": {
                        "count": repeats,
                        "lastObservedTime": stamp(waited - timedelta(seconds=5), micros=True),
                    },
                }
            )
    if pod.bound is not None:
        bound = when(pod.bound)
        out.append(
            new_event(
                ref,
                "Scheduled",
                "Binding",
                f"Successfully assigned {pod.namespace}/{pod.name} to {pod.node}",
                bound,
                "default-scheduler",
            )
        )
        image = "us-docker.pkg.dev/ml/train:2026.11"
        for reason, message, after in (
            ("Pulled", f'Container image "{image}" already present on machine', 4),
            ("Created", "Created container: main", 5),
            ("Started", "Started container main", 6),
        ):
            out.append(
                core_event(
                    ref | {"fieldPath": "spec.containers{main}"},
                    reason,
                    message,
                    bound + timedelta(seconds=after),
                    "kubelet",
                    host=pod.node,
                )
            )
    if pod.how == "killed" and pod.end is not None:
        out.append(
            core_event(
                ref | {"fieldPath": "spec.containers{main}"},
                "Killing",
                "Stopping container main",
                when(pod.end),
                "kubelet",
                host=pod.node,
            )
        )
    if pod.how == "lost" and pod.end is not None:
        lost = when(pod.end)
        out.append(
            core_event(
                ref, "NodeNotReady", "Node is not ready", lost, "node-controller", warning=True
            )
        )
        out.append(
            core_event(
                pod_ref(pod, with_uid=False),
                "TaintManagerEviction",
                f"Marking for deletion Pod {pod.namespace}/{pod.name}",
                lost + timedelta(seconds=300),
                "taint-eviction-controller",
            )
        )
    return out


def job_created_events(pods: list[Pod]) -> list[dict[str, Any]]:
    """The Job controller's `SuccessfulCreate` on each pod's Job (events about Jobs of JobSets:
    about the job, though nothing in them moves its allocation)."""
    out = []
    for pod in pods:
        about = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": pod.job,
            "namespace": pod.namespace,
            "uid": uid(f"{pod.job}/{pod.attempt}"),
        }
        out.append(
            core_event(
                about,
                "SuccessfulCreate",
                f"Created pod: {pod.name}",
                when(pod.created),
                "job-controller",
            )
        )
    return out
