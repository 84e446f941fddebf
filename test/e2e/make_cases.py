#!/usr/bin/env python3
"""Writes the simulation fixtures under cases/ (run once; the fixtures are committed).

Expectations are derived by hand from kube-scheduler's rules; each case's expect.json says how.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def node(name, cpu="4", mem="8Gi", labels=None, taints=None, unschedulable=False):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
         "status": {"capacity": {"cpu": cpu, "memory": mem, "pods": "110"},
                    "allocatable": {"cpu": cpu, "memory": mem, "pods": "110"}}}
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    if spec:
        n["spec"] = spec
    return n


def pod(name, cpu=None, mem=None, node=None, priority=None, created="2024-01-01T00:00:00Z",
        scheduler=None, labels=None, extra=None):
    req = {}
    if cpu:
        req["cpu"] = cpu
    if mem:
        req["memory"] = mem
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default", "creationTimestamp": created,
                      "uid": "uid-" + name},
         "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": req}}]}}
    if labels:
        p["metadata"]["labels"] = labels
    if node:
        p["spec"]["nodeName"] = node
        p["status"] = {"phase": "Running", "startTime": created}
    if priority is not None:
        p["spec"]["priority"] = priority
    if scheduler:
        p["spec"]["schedulerName"] = scheduler
    if extra:
        p["spec"].update(extra)
    return p


def write(case, objects, expect, config=None):
    d = os.path.join(HERE, "cases", case)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cluster.yaml"), "w") as f:
        f.write("\n---\n".join(json.dumps(o) for o in objects) + "\n")
    with open(os.path.join(d, "expect.json"), "w") as f:
        json.dump(expect, f, indent=2)
        f.write("\n")
    if config:
        with open(os.path.join(d, "config.yaml"), "w") as f:
            f.write(config)


HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

# Default profile, every node rejected for a different reason; no lower-priority pod to evict.
write("default-profile-fit-error", [
    node("n1", cpu="2"), node("n2", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
    node("n3", unschedulable=True),
    pod("busy", cpu="1500m", node="n1"),
    pod("p", cpu="1", created="2024-01-01T00:01:00Z"),
], {"pods": [{
    "pod": "default/p", "result": "Unschedulable",
    "message": "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), "
               "1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption "
               "victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
    "filter": {"n1": {"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"], "code": "Unschedulable"},
               "n2": {"plugin": "TaintToleration", "reasons": ["node(s) had untolerated taint(s)"],
                      "code": "UnschedulableAndUnresolvable"},
               "n3": {"plugin": "NodeUnschedulable", "reasons": ["node(s) were unschedulable"],
                      "code": "UnschedulableAndUnresolvable"}}}]})

# Default profile scoring: LeastAllocated and BalancedAllocation prefer the emptier node;
# TaintToleration gives 100 to both; ImageLocality 0; other scorers skip.
# n1 (4 cpu / 8Gi, 2 cpu / 4Gi used) + pod 1 cpu / 2Gi: least (25+25)/2 = 25, balanced 100.
# n2 empty + pod: least (75+75)/2 = 75, balanced 100.
write("default-profile-scores", [
    node("n1"), node("n2"),
    pod("running", cpu="2", mem="4Gi", node="n1"),
    pod("p", cpu="1", mem="2Gi", created="2024-01-01T00:01:00Z"),
], {"pods": [{
    "pod": "default/p", "result": "Scheduled", "node": "n2", "feasible": ["n1", "n2"],
    "scores": {"n1": {"NodeResourcesFit": 25, "NodeResourcesBalancedAllocation": 100,
                      "TaintToleration": 100, "ImageLocality": 0},
               "n2": {"NodeResourcesFit": 75, "NodeResourcesBalancedAllocation": 100,
                      "TaintToleration": 100, "ImageLocality": 0}},
    "total": {"n1": 425, "n2": 475}}]})

# Every default score plugin disabled, NodeResourcesFit (MostAllocated) enabled alone.
# n1: cpu (2000+1000)/4000 = 75, mem (4Gi+2Gi)/8Gi = 75 -> 75; n2: 25.
write("score-disabled-all-but-one", [
    node("n1"), node("n2"),
    pod("running", cpu="2", mem="4Gi", node="n1"),
    pod("p", cpu="1", mem="2Gi", created="2024-01-01T00:01:00Z"),
], {"pods": [{
    "pod": "default/p", "result": "Scheduled", "node": "n1",
    "scores": {"n1": {"NodeResourcesFit": 75}, "n2": {"NodeResourcesFit": 25}},
    "total": {"n1": 150, "n2": 50}}]},
    HEADER + """profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: NodeResourcesFit
        weight: 2
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
""")

# pluginConfig args: RequestedToCapacityRatio on cpu with shape {0:10, 100:0}.
# n1: (2000+400)/4000 = 60% -> 100 - 60 = 40; n2: 10% -> 90.
write("args-requested-to-capacity-ratio", [
    node("n1"), node("n2"),
    pod("running", cpu="2", node="n1"),
    pod("p", cpu="400m", created="2024-01-01T00:01:00Z"),
], {"pods": [{
    "pod": "default/p", "result": "Scheduled", "node": "n2",
    "scores": {"n1": {"NodeResourcesFit": 40}, "n2": {"NodeResourcesFit": 90}}}]},
    HEADER + """percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: '*'
    queueSort:
      enabled: [{name: PrioritySort}]
    preFilter:
      enabled: [{name: NodeResourcesFit}]
    filter:
      enabled: [{name: NodeResourcesFit}]
    preScore:
      enabled: [{name: NodeResourcesFit}]
    score:
      enabled: [{name: NodeResourcesFit, weight: 1}]
    bind:
      enabled: [{name: DefaultBinder}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 1}]
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 10}
          - {utilization: 100, score: 0}
""")

# Two profiles chosen by schedulerName: the spreading default and a bin-packing profile.
write("two-profiles", [
    node("n1"), node("n2"),
    pod("running", cpu="2", mem="4Gi", node="n1"),
    pod("spread", cpu="1", mem="2Gi", created="2024-01-01T00:01:00Z"),
    pod("packed", cpu="1", mem="2Gi", created="2024-01-01T00:02:00Z", scheduler="bin-packing"),
    pod("stray", cpu="1", created="2024-01-01T00:03:00Z", scheduler="nobody"),
], {"results": ["default/spread", "default/packed", "default/stray"], "pods": [
    {"pod": "default/spread", "result": "Scheduled", "node": "n2"},
    {"pod": "default/packed", "result": "Scheduled", "node": "n1",
     "scores": {"n1": {"NodeResourcesFit": 75}, "n2": {"NodeResourcesFit": 50}}},
    {"pod": "default/stray", "result": "NotHandled"}]},
    HEADER + """profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
""")

# Scheduling gates hold a pod; an ungated twin is scheduled.
write("gated", [
    node("n1"),
    pod("held", cpu="100m", extra={"schedulingGates": [{"name": "example.com/a"}, {"name": "example.com/b"}]}),
    pod("free", cpu="100m", created="2024-01-01T00:01:00Z"),
], {"pods": [
    {"pod": "default/held", "result": "Gated",
     "message": "waiting for scheduling gates: [example.com/a example.com/b]"},
    {"pod": "default/free", "result": "Scheduled", "node": "n1"}]})

# Preemption: the high-priority pod evicts the lowest-priority pod, is nominated, and binds on
# its next attempt once the victim is gone.
write("preemption-basic", [
    node("n1", cpu="2"), node("n2", cpu="2"),
    pod("low", cpu="1500m", node="n1", priority=1),
    pod("mid", cpu="1500m", node="n2", priority=5),
    pod("high", cpu="1", priority=10, created="2024-01-01T00:01:00Z"),
], {"pods": [{"pod": "default/high", "result": "Scheduled", "node": "n1",
              "nominatedNode": "n1", "victims": ["default/low"]}]})

# PreFilter rejection: a claim that does not exist. VolumeRestrictions runs before VolumeBinding
# and is the first to look the claim up.
write("prefilter-missing-pvc", [
    node("n1"), node("n2"),
    pod("p", cpu="100m", extra={"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}),
], {"pods": [{"pod": "default/p", "result": "Unschedulable", "preFilterPlugin": "VolumeRestrictions",
              "messageContains": ["0/2 nodes are available: persistentvolumeclaim \"data\" not found."]}]})

# Topology spread (DoNotSchedule, zone) and required anti-affinity in the default profile.
write("default-spread-and-anti-affinity", [
    node("a1", labels={"topology.kubernetes.io/zone": "a"}),
    node("a2", labels={"topology.kubernetes.io/zone": "a"}),
    node("b1", labels={"topology.kubernetes.io/zone": "b"}),
    pod("web-0", cpu="100m", node="a1", labels={"app": "web"}),
    pod("web-1", cpu="100m", created="2024-01-01T00:01:00Z", labels={"app": "web"}, extra={
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}),
], {"pods": [{"pod": "default/web-1", "result": "Scheduled", "node": "b1", "feasible": ["b1"],
              "filter": {"a1": {"plugin": "PodTopologySpread",
                                "reasons": ["node(s) didn't match pod topology spread constraints"]},
                         "a2": {"plugin": "PodTopologySpread",
                                "reasons": ["node(s) didn't match pod topology spread constraints"]}}}]})
