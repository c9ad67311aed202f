"""The tables `kubernetes_read` fills from Kubernetes objects, one row per object (or per pod
set, condition...), keyed by `rid`, the record it came from; and the labels and annotations it
reads, as Kueue, JobSet, the Job controller and GKE write them (docs/adapters/kubernetes.md
names the sources)."""

from __future__ import annotations

import polars as pl

TPU, GPU = "google.com/tpu", "nvidia.com/gpu"
# The node label GKE puts the accelerator's type in, per resource.
SELECTOR = {TPU: "cloud.google.com/gke-tpu-accelerator", GPU: "cloud.google.com/gke-accelerator"}
TOPOLOGY = "cloud.google.com/gke-tpu-topology"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
QUEUE_NAME = "kueue.x-k8s.io/queue-name"  # the LocalQueue, on the job (and its Workload)
PODSET_LABEL = "kueue.x-k8s.io/podset"  # on an admitted job's pods: the pod set's name
WORKLOAD_NAME = "kueue.x-k8s.io/workload"  # annotation on pods (topology-aware scheduling)
JOB_NAME = ("batch.kubernetes.io/job-name", "job-name")  # the Job controller's pod labels

# One row per record: `rid` numbers them over all files; `problem` is why one cannot be read.
RECORD = {
    "rid": pl.Int64,
    "file": pl.String,
    "line": pl.Int64,
    "raw": pl.String,
    "kind": pl.String,
    "problem": pl.String,
    "malformed": pl.Boolean,  # not JSON at all (the import's state keeps its problem as is)
}
WORKLOAD = {
    "rid": pl.Int64,
    "namespace": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "created": pl.String,
    "deleted": pl.String,
    "active": pl.Boolean,
    "priority": pl.Int64,
    "owner_kind": pl.String,
    "owner_name": pl.String,
    "owner_uid": pl.String,
    "queue": pl.String,  # spec.queueName: the LocalQueue
    "cluster_queue": pl.String,  # status.admission.clusterQueue
    "owner_label": pl.String,  # the value of --owner-label
    "admitted": pl.Boolean,  # status.admission is set: it describes the latest admission
    "evictions": pl.Int64,  # status.schedulingStats: evictions other than deactivations, or null
}
CONDITION = {
    "rid": pl.Int64,
    "type": pl.String,
    "status": pl.String,
    "reason": pl.String,
    "message": pl.String,
    "at": pl.String,
}
PODSET = {
    "rid": pl.Int64,
    "podset": pl.Int64,  # position in spec.podSets: the task index
    "name": pl.String,
    "count": pl.Int64,
    "min_count": pl.Int64,
    "resource": pl.String,  # google.com/tpu or nvidia.com/gpu, null for a pod set without either
    "per_pod": pl.Int64,
    "selector": pl.String,  # the node selector's accelerator value for that resource
    "topology": pl.String,
    "assigned": pl.Int64,  # status.admission.podSetAssignments[].count
    "flavor": pl.String,  # the ResourceFlavor assigned for the resource
}
EVENT = {
    "rid": pl.Int64,
    "identity": pl.String,
    "namespace": pl.String,
    "about_kind": pl.String,
    "about_name": pl.String,
    "about_uid": pl.String,
    "reason": pl.String,
    "message": pl.String,
    "first": pl.String,
    "last": pl.String,
    "count": pl.Int64,
}
JOBSET = {
    "rid": pl.Int64,
    "namespace": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "restarts": pl.Int64,
    "created": pl.String,
    "owner_label": pl.String,
}
JOB = {  # a batch Job: a JobSet's child, or a Workload's owner
    "rid": pl.Int64,
    "namespace": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "jobset": pl.String,
    "created": pl.String,
    "owner_label": pl.String,
}
CHILD = {  # a Job or Pod of a JobSet, by its labels
    "rid": pl.Int64,
    "namespace": pl.String,
    "jobset": pl.String,
    "jobset_uid": pl.String,
    "attempt": pl.Int64,
    "created": pl.String,
}
POD = {
    "rid": pl.Int64,
    "namespace": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "created": pl.String,
    "deleted": pl.String,  # metadata.deletionTimestamp: the request + the grace period
    "grace": pl.Int64,  # metadata.deletionGracePeriodSeconds
    "node": pl.String,  # spec.nodeName: bound
    "phase": pl.String,
    "started": pl.String,  # status.startTime: the kubelet took the pod
    "finished": pl.String,  # the last container's finishedAt, where every container ended
    "owner_kind": pl.String,
    "owner_name": pl.String,
    "owner_uid": pl.String,
    "jobset": pl.String,
    "jobset_uid": pl.String,
    "rjob": pl.String,  # the JobSet's replicated job: its pod set
    "podset": pl.String,  # Kueue's pod set label
    "workload": pl.String,  # Kueue's workload annotation
    "job": pl.String,  # the Job controller's job-name label
    "chips": pl.Int64,  # accelerators the pod asks for (0: none)
    "owner_label": pl.String,
}
FLAVOR = {"rid": pl.Int64, "name": pl.String, "tpu": pl.String, "gpu": pl.String}
