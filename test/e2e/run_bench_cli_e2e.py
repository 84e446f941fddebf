#!/usr/bin/env python3
"""`berth bench` as its documentation shows it: every flag on a small workload file."""
import json
import os
import subprocess
import sys
import tempfile

BERTH = sys.argv[1]

WORKLOADS = """
templates:
  node: &node
    apiVersion: v1
    kind: Node
    metadata: {name: template}
    status:
      allocatable: {pods: "110", cpu: "4", memory: 32Gi}
      conditions: [{type: Ready, status: "True"}]
  pod: &pod
    apiVersion: v1
    kind: Pod
    metadata: {name: pod, namespace: default}
    spec:
      containers:
      - name: pause
        resources: {requests: {cpu: 100m, memory: 500Mi}}
workloads:
- name: Small/Replicas
  nodes: 50
  nodeTemplate: *node
  initPods: [{count: 20, namePrefix: init, template: *pod}]
  measurePods: [{count: 200, namePrefix: m, template: *pod}]
- name: Small/Varied
  nodes: 50
  zones: 5
  nodeTemplate: *node
  measurePods: [{count: 100, namePrefix: m, template: *pod,
                 vary: {cpuMillis: 7, memoryMi: 5, labels: 3, zones: 5, priorities: [0, 10]}}]
"""

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def bench(*args):
    return subprocess.run([BERTH, "bench", "--workloads", path, *args], capture_output=True,
                          text=True, timeout=300)


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "workloads.yaml")
    with open(path, "w") as f:
        f.write(WORKLOADS)

    p = bench()
    check(p.returncode == 0 and "Small/Replicas" in p.stdout and "Small/Varied" in p.stdout,
          "text output lists every workload")

    p = bench("--filter", "Varied", "--output", "json")
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    check(p.returncode == 0 and len(lines) == 1 and lines[0]["name"] == "Small/Varied",
          "--filter selects by name; --output json prints one object per workload")
    check(lines and lines[0].get("scheduled") == 100, "every varied pod is scheduled")

    p = bench("--filter", "Replicas", "--repeat", "2", "--output", "json")
    obj = json.loads(p.stdout.splitlines()[0]) if p.returncode == 0 else {}
    check(obj.get("repeat") == 2 and len(obj.get("podsPerSecondRuns", [])) == 2,
          "--repeat 2 reports both runs and their median")

    for flag in ("--metrics", "--no-reuse"):
        p = bench("--filter", "Replicas", "--output", "json", flag)
        obj = json.loads(p.stdout.splitlines()[0]) if p.returncode == 0 else {}
        check(obj.get("scheduled") == 200, f"{flag}: every pod is still scheduled")

    bad = os.path.join(d, "bad.yaml")
    with open(bad, "w") as f:
        f.write(WORKLOADS.replace("labels: 3", "labels: many"))
    p = subprocess.run([BERTH, "bench", "--workloads", bad], capture_output=True, text=True)
    check(p.returncode != 0 and "vary.labels: must be a non-negative integer" in p.stderr,
          "a bad vary field is named: " + p.stderr.strip()[:200])

# The project's own workload file, as docs/performance.md runs it: it loads whole, and the
# replicas of a ReplicaSet (spread by the system default constraints) all schedule.
project = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                       "workloads.yaml")
p = subprocess.run([BERTH, "bench", "--workloads", project, "--filter", "SchedulingReplicaSet/5000",
                    "--output", "json"], capture_output=True, text=True)
rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
check(p.returncode == 0 and [r["name"] for r in rows] == ["SchedulingReplicaSet/5000Nodes"] and
      rows[0]["scheduled"] == 10000,
      "bench/workloads.yaml loads and SchedulingReplicaSet/5000Nodes schedules its 10,000 replicas: "
      + (p.stdout + p.stderr).strip()[:300])

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
