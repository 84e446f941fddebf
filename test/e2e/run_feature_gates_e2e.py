#!/usr/bin/env python3
"""--feature-gates on `berth simulate`, `berth scheduler` and `berth up`: a gate Berth honours
changes the decision; kube-scheduler's errors (unknown gate, locked gate, bad value) stop the
command with a non-zero exit before it does anything."""
import json
import os
import subprocess
import sys
import tempfile

BERTH = sys.argv[1]

# One 4-cpu node; the pod's container asks 1 cpu, its pod-level spec.resources 8.
MANIFEST = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  resources:
    requests: {cpu: "8"}
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: "1"}}
"""

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args, timeout=60):
    return subprocess.run([BERTH, *args], capture_output=True, text=True, timeout=timeout)


def simulate_result(path, *flags):
    p = run("simulate", "-f", path, "-o", "json", *flags)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.strip())
    return [r["result"] for r in json.loads(p.stdout)["results"] if r["pod"] == "default/big"]


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "cluster.yaml")
    with open(path, "w") as f:
        f.write(MANIFEST)

    got = simulate_result(path)
    check(got == ["Unschedulable"], "default gates: pod-level 8 cpu does not fit 4 (%s)" % got)
    got = simulate_result(
        path, "--feature-gates",
        "PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false")
    check(got == ["Scheduled"], "PodLevelResources=false: only the container's 1 cpu counts (%s)"
          % got)
    # Each occurrence is checked as it is added, as upstream's flag does: the dependent gate
    # goes off first.
    got = simulate_result(path, "--feature-gates=InPlacePodLevelResourcesVerticalScaling=false",
                          "--feature-gates=PodLevelResources=false")
    check(got == ["Scheduled"], "repeated --feature-gates accumulate (%s)" % got)

    cases = [
        (["simulate", "-f", path, "--feature-gates=Bogus=true"],
         'invalid argument "Bogus=true" for "--feature-gates" flag: '
         'unrecognized feature gate: Bogus'),
        (["simulate", "-f", path, "--feature-gates=PodLevelResources=false"],
         "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are "
         "disabled: [PodLevelResources]"),
        (["scheduler", "--feature-gates=Bogus=true"],
         'invalid argument "Bogus=true" for "--feature-gates" flag: '
         'unrecognized feature gate: Bogus'),
        (["scheduler", "--feature-gates", "SchedulerQueueingHints=false"],
         "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true"),
        (["scheduler", "--feature-gates=PodLevelResources=maybe"],
         'invalid value of PodLevelResources=maybe, err: strconv.ParseBool: parsing "maybe": '
         'invalid syntax'),
        (["up", "--data-dir", os.path.join(d, "up"), "--feature-gates=Bogus=true"],
         'invalid argument "Bogus=true" for "--feature-gates" flag: '
         'unrecognized feature gate: Bogus'),
    ]
    for args, want in cases:
        p = run(*args)
        check(p.returncode == 1 and want in p.stderr,
              "berth %s exits 1 with %r (exit %d, stderr %r)"
              % (" ".join(args[:1] + args[-1:]), want, p.returncode, p.stderr.strip()[:300]))

    # The other commands that build the scheduler's plugins take the flag too.
    for args in (["bench"], ["explain", "default/big", "-f", path],
                 ["compare", "-f", path, "--config", "default", "--config", "default"],
                 ["capacity", "-f", path]):
        p = run(*args, "--feature-gates=Bogus=true")
        check(p.returncode != 0 and "unrecognized feature gate: Bogus" in p.stderr,
              "berth %s --feature-gates=Bogus=true fails (exit %d, stderr %r)"
              % (args[0], p.returncode, p.stderr.strip()[:300]))

    p = run("simulate", "-f", path, "--feature-gates=SchedulerQueueingHints=true")
    check(p.returncode == 0 and "Setting GA feature gate SchedulerQueueingHints=true" in p.stderr,
          "a GA gate set to its value warns and runs (exit %d, %r)"
          % (p.returncode, p.stderr.strip()[:300]))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all feature-gates checks passed")
