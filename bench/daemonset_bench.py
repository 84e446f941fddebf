#!/usr/bin/env python3
"""Benchmark: a DaemonSet over every node of `berth up --demo-nodes N`, until all its pods run.

Usage: daemonset_bench.py BERTH [--nodes 5000] [--runs 1]

Starts `berth up` with N demo nodes (simulated kubelets, the embedded scheduler and the
controllers), waits until the nodes exist and the API answers, creates one DaemonSet through
the API and polls its status every 20 ms. Reports the time from the create to:
  * every pod created (currentNumberScheduled = N),
  * every pod Ready (numberReady = N; the simulated kubelet marks a pod Running and Ready
    together),
and the CPU time `berth up` spent in that window. Then it lists the pods and checks that
there are N, one per node, all Running. Not a timed test: numbers go to docs/up.md.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_scheduler_bench import Api, free_port, proc_stats  # noqa: E402

DS = {"apiVersion": "apps/v1", "kind": "DaemonSet",
      "metadata": {"name": "agent", "namespace": "default"},
      "spec": {"selector": {"matchLabels": {"app": "agent"}},
               "template": {"metadata": {"labels": {"app": "agent"}},
                            "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}


def cpu_seconds(pid):
    return proc_stats(pid)[0]


def one_run(berth, nodes):
    tmp = tempfile.mkdtemp(prefix="berth-ds-bench-")
    port = free_port()
    up = subprocess.Popen([berth, "up", "--data-dir", tmp, "--port", str(port),
                           "--demo-nodes", str(nodes)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not os.path.exists(os.path.join(tmp, "kubeconfig")):
            time.sleep(0.1)
        api = Api(tmp, port)
        while True:
            try:
                status, body = api.call("GET", "/api/v1/nodes")
                if status == 200 and len(json.loads(body)["items"]) >= nodes:
                    break
            except OSError:
                api.local.c = None
            time.sleep(0.2)
        time.sleep(2)  # node status and leases settle: measure the DaemonSet alone
        cpu0 = cpu_seconds(up.pid)
        t0 = time.time()
        status, body = api.call("POST", "/apis/apps/v1/namespaces/default/daemonsets", DS)
        if status != 201:
            raise SystemExit("create: %d %s" % (status, body[:200]))
        created = ready = None
        while ready is None and time.time() - t0 < 300:
            _, body = api.call("GET", "/apis/apps/v1/namespaces/default/daemonsets/agent")
            st = json.loads(body).get("status", {})
            now = time.time() - t0
            if created is None and st.get("currentNumberScheduled") == nodes:
                created = now
            if st.get("numberReady") == nodes:
                ready = now
            time.sleep(0.02)
        cpu = cpu_seconds(up.pid) - cpu0
        _, body = api.call("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dagent")
        items = json.loads(body)["items"]
        on_nodes = {p["spec"].get("nodeName") for p in items}
        running = sum(p.get("status", {}).get("phase") == "Running" for p in items)
        ok = len(items) == nodes and len(on_nodes) == nodes and running == nodes
        return created, ready, cpu, ok, len(items), running
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            up.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    for i in range(args.runs):
        created, ready, cpu, ok, n, running = one_run(args.berth, args.nodes)
        fmt = lambda v: "%.2fs" % v if v is not None else "timeout"  # noqa: E731
        print("run %d: %d nodes: all created %s, all Ready %s, berth up CPU %.1fs; "
              "%d pods, %d Running, one per node: %s" % (
                  i + 1, args.nodes, fmt(created), fmt(ready), cpu, n, running, ok), flush=True)


if __name__ == "__main__":
    main()
