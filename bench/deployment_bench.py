#!/usr/bin/env python3
"""Times the Deployment controller of `berth up` at scale.

Usage: deployment_bench.py BERTH [--nodes 5000] [--replicas 10000] [--no-rollout]

Starts `berth up --demo-nodes NODES` on a fresh data directory, then measures
  1. `kubectl apply` of a Deployment of REPLICAS replicas until status.readyReplicas == REPLICAS;
  2. a rolling update of it (maxSurge 25%, maxUnavailable 25%) until the rollout is complete
     (updated == available == replicas, no old pods).
Prints one line per phase with the seconds taken, the load average at the start, and at the end
the peak RSS (VmHWM) of `berth up` and how many nodes the node lifecycle controller marked
Unknown because their lease was not renewed in time (0 on a healthy run). --no-rollout stops
after the first phase.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "up"))
from run_up_e2e import Up  # noqa: E402


def status(up):
    out = up.kubectl(["get", "deploy", "big", "-o", "json"])[1]
    d = json.loads(out)
    return d["metadata"].get("generation"), d.get("status", {})


def wait(up, done, timeout):
    # Each look is a kubectl process (~0.1 s of CPU): every 0.25 s for the first 20 s, so short
    # runs are timed closely, then every second, so that long runs are not slowed by the looking.
    start = time.time()
    deadline = start + timeout
    while time.time() < deadline:
        gen, st = status(up)
        if done(gen, st):
            return True
        time.sleep(0.25 if time.time() - start < 20 else 1)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--replicas", type=int, default=10000)
    ap.add_argument("--no-rollout", action="store_true")
    args = ap.parse_args()
    n = args.replicas
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    data_dir = tempfile.mkdtemp(prefix="berth-deploy-bench-")
    up = Up(os.path.abspath(args.berth), data_dir, demo_nodes=args.nodes)
    try:
        wait_nodes = time.time()
        # One unpaged list: kubectl's own paging (500 a page) is held to its client-side rate
        # limit, which takes longer than the cluster at 100,000 nodes.
        while len(json.loads(up.kubectl(["get", "--raw", "/api/v1/nodes"],
                                        timeout=300)[1])["items"]) < args.nodes:
            time.sleep(1)
        print("nodes ready after %.1f s" % (time.time() - wait_nodes), flush=True)
        d = {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "big", "namespace": "default"},
             "spec": {"replicas": n, "selector": {"matchLabels": {"app": "big"}},
                      "strategy": {"type": "RollingUpdate",
                                   "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                      "template": {"metadata": {"labels": {"app": "big"}},
                                   "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
        t = time.time()
        up.kubectl(["apply", "-f", "-"], stdin=json.dumps(d))
        ok = wait(up, lambda g, s: s.get("readyReplicas") == n, 600)
        print("apply -> readyReplicas %d: %.1f s%s" % (n, time.time() - t, "" if ok else " (timed out)"),
              flush=True)
        if args.no_rollout:
            return
        t = time.time()
        up.kubectl(["set", "image", "deploy/big", "c=nginx:2"])
        ok = wait(up, lambda g, s: s.get("observedGeneration") == g and
                  s.get("updatedReplicas") == n and s.get("replicas") == n and
                  s.get("availableReplicas") == n, 900)
        print("rolling update of %d (maxSurge 25%%): %.1f s%s" % (n, time.time() - t,
                                                                 "" if ok else " (timed out)"),
              flush=True)
    finally:
        with open("/proc/%d/status" % up.proc.pid) as f:
            peak = [line.split()[1] for line in f if line.startswith("VmHWM:")]
        print("peak RSS of berth up: %d MiB" % (int(peak[0]) // 1024), flush=True)
        # A node whose lease went unrenewed past the grace period is marked Unknown (and
        # tainted unreachable) by the node lifecycle controller, which logs each one.
        with open(os.path.join(data_dir, "up.log"), errors="replace") as f:
            unknown = sum(1 for line in f if "Ready is Unknown" in line)
        print("nodes marked Unknown for want of a heartbeat: %d" % unknown, flush=True)
        up.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
