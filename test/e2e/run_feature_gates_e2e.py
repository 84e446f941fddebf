#!/usr/bin/env python3
"""--feature-gates on `berth simulate`, `berth scheduler` and `berth up`: a gate Berth honours
(PodLevelResources, OpportunisticBatching)
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

    # OpportunisticBatching (on by default): under a profile that signs pods (no default
    # spreading), 100 small nodes then 100 large ones, and three alike pods each holding host
    # port 8080. The first cycle scores the small nodes only; with batching the next pods take
    # that ranking's next nodes (small), with the gate off full cycles scan on (large).
    batch_cluster = os.path.join(d, "batching.yaml")
    with open(batch_cluster, "w") as f:
        for i in range(200):
            f.write('apiVersion: v1\nkind: Node\nmetadata: {name: n%03d}\n'
                    'status: {allocatable: {cpu: "%s", memory: 64Gi, pods: "110"}}\n---\n'
                    % (i, "4" if i < 100 else "64"))
        for j in range(3):
            f.write('apiVersion: v1\nkind: Pod\nmetadata: {name: web-%d, namespace: default}\n'
                    'spec:\n  containers: [{name: c, image: nginx, resources: {requests: '
                    '{cpu: "1"}}, ports: [{containerPort: 8080, hostPort: 8080}]}]\n---\n' % j)
    signed = os.path.join(d, "signed.yaml")
    with open(signed, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\n"
                "kind: KubeSchedulerConfiguration\n"
                "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
                "  - name: PodTopologySpread\n"
                "    args: {apiVersion: kubescheduler.config.k8s.io/v1, "
                "kind: PodTopologySpreadArgs, defaultingType: List}\n")

    def placements(*flags):
        p = run("simulate", "-f", batch_cluster, "-o", "json", *flags)
        if p.returncode != 0:
            return "exit %d: %s" % (p.returncode, p.stderr.strip())
        return [r.get("node", "") for r in json.loads(p.stdout)["results"]]

    batched = placements("--config", signed)
    full = placements("--config", signed, "--feature-gates", "OpportunisticBatching=false")
    small = lambda nodes: [n < "n100" for n in nodes]
    check(isinstance(batched, list) and small(batched) == [True, True, True],
          "OpportunisticBatching (default on): alike pods take the first ranking's nodes (%s)"
          % batched)
    check(isinstance(full, list) and small(full) == [True, False, False],
          "OpportunisticBatching=false: every pod gets a full cycle (%s)" % full)
    check(placements() == placements("--feature-gates", "OpportunisticBatching=false"),
          "default profile: the gate changes no decision")

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
