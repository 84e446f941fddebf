#!/usr/bin/env python3
"""Benchmark: `berth up`'s controllers and simulated kubelets at scale.

Usage: cluster_bench.py BERTH [--nodes 5000] [--replicas 10000] [--runs 1]
                        [--scenarios deployment,rollout,daemonset,heartbeat]
                        [--heartbeat-seconds 30] [--pod-start-delay 500ms] [--json]

Each run starts `berth up --demo-nodes NODES` on a fresh data directory and a free port, waits
until every node exists and is Ready (the simulated kubelets post it), lets the leases settle,
then runs the chosen scenarios in this order:
  * heartbeat:  nothing is created for --heartbeat-seconds; the CPU `berth up` spends meanwhile
                is the cost of the nodes' Leases and Ready heartbeats (and of every controller
                and watch that sees them), reported as a percentage of one core;
  * deployment: `kubectl apply` of a Deployment of REPLICAS replicas until its status says
                readyReplicas == REPLICAS (and until every pod is Running, which the simulated
                kubelet reports together with Ready);
  * rollout:    `kubectl set image` on it until the rollout is complete (observedGeneration
                current, updated == available == replicas, no old pods left: replicas ==
                REPLICAS), maxSurge and maxUnavailable 25%;
  * daemonset:  a DaemonSet created through the API until numberReady == NODES; then the pods
                are listed and checked: NODES of them, one per node, all Running.
For each scenario it prints the seconds, the CPU seconds `berth up` spent, and the load average
(1 min) when the scenario started; at the end the peak RSS (VmHWM) of `berth up`. Status is
polled through the REST API every 50 ms (kubectl would cost a process per poll). With --runs N
every scenario's median is printed too. Not a timed test: numbers go to docs/performance.md.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_scheduler_bench import Api, free_port, proc_stats  # noqa: E402

KUBECTL = os.environ.get("KUBECTL", "kubectl")
NS = "default"


def deployment(replicas):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "big", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "big"}},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": {"metadata": {"labels": {"app": "big"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}


DAEMONSET = {"apiVersion": "apps/v1", "kind": "DaemonSet",
             "metadata": {"name": "agent", "namespace": NS},
             "spec": {"selector": {"matchLabels": {"app": "agent"}},
                      "template": {"metadata": {"labels": {"app": "agent"}},
                                   "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}


class Cluster:
    """A `berth up` process on a temporary data directory."""

    def __init__(self, berth, nodes, extra):
        self.dir = tempfile.mkdtemp(prefix="berth-cluster-bench-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "up.log"), "w")
        self.proc = subprocess.Popen(
            [berth, "up", "--data-dir", self.dir, "--port", str(self.port),
             "--demo-nodes", str(nodes)] + extra, stdout=self.log, stderr=subprocess.STDOUT)
        while not os.path.exists(os.path.join(self.dir, "kubeconfig")):
            if self.proc.poll() is not None:
                raise SystemExit("berth up exited with %d" % self.proc.returncode)
            time.sleep(0.1)
        self.api = Api(self.dir, self.port)

    def get(self, path):
        while True:
            try:
                status, body = self.api.call("GET", path)
                if status == 200:
                    return json.loads(body)
            except OSError:
                self.api.local.c = None
            time.sleep(0.2)

    def kubectl(self, args, stdin=None):
        env = dict(os.environ, KUBECONFIG=os.path.join(self.dir, "kubeconfig"))
        p = subprocess.run([KUBECTL] + args, env=env, input=stdin, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit("kubectl %s: %s" % (" ".join(args), p.stderr.strip()))

    def cpu(self):
        return proc_stats(self.proc.pid)[0]

    def peak_rss_mib(self):
        return proc_stats(self.proc.pid)[1]

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def ready_nodes(cluster, limit=None):
    """How many nodes report Ready=True (one paged list)."""
    n, cont = 0, ""
    while True:
        page = cluster.get("/api/v1/nodes?limit=5000" + ("&continue=" + cont if cont else ""))
        for node in page["items"]:
            for c in node.get("status", {}).get("conditions", []):
                if c.get("type") == "Ready" and c.get("status") == "True":
                    n += 1
        cont = page["metadata"].get("continue", "")
        if not cont:
            return n


def poll(what, fn, timeout):
    """Polls fn() every 50 ms until it is true; returns the seconds taken, None on timeout."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if fn():
            return time.time() - t0
        time.sleep(0.05)
    print("  %s: timed out after %d s" % (what, timeout), flush=True)
    return None


def count_pods(cluster, selector, phase="Running"):
    n, cont, nodes = 0, "", set()
    while True:
        page = cluster.get("/api/v1/namespaces/%s/pods?labelSelector=%s&limit=5000%s" % (
            NS, selector, "&continue=" + cont if cont else ""))
        for p in page["items"]:
            if p.get("status", {}).get("phase") == phase:
                n += 1
                nodes.add(p["spec"].get("nodeName"))
        cont = page["metadata"].get("continue", "")
        if not cont:
            return n, len(nodes)


class Scenario:
    def __init__(self, cluster, results, name):
        self.cluster, self.results, self.name = cluster, results, name

    def __enter__(self):
        self.load = os.getloadavg()[0]
        self.cpu0 = self.cluster.cpu()
        self.t0 = time.time()
        return self

    def done(self, seconds, note=""):
        cpu = self.cluster.cpu() - self.cpu0
        self.results.setdefault(self.name, []).append((seconds, cpu, self.load))
        shown = "%.2f s" % seconds if seconds is not None else "timeout"
        print("  %-10s %s, berth up CPU %.1f s, load %.1f%s" % (
            self.name, shown, cpu, self.load, note), flush=True)

    def __exit__(self, *exc):
        return False


def run_deployment(cluster, args, results):
    n = args.replicas
    path = "/apis/apps/v1/namespaces/%s/deployments/big" % NS
    with Scenario(cluster, results, "deployment") as s:
        cluster.kubectl(["apply", "-f", "-"], stdin=json.dumps(deployment(n)))
        t = poll("readyReplicas", lambda: cluster.get(path).get("status", {}).get(
            "readyReplicas") == n, args.timeout)
        running = count_pods(cluster, "app%3Dbig")[0]
        s.done(t, "; %d pods Running" % running)


def run_rollout(cluster, args, results):
    n = args.replicas
    path = "/apis/apps/v1/namespaces/%s/deployments/big" % NS

    def complete():
        d = cluster.get(path)
        st = d.get("status", {})
        return (st.get("observedGeneration") == d["metadata"].get("generation") and
                st.get("updatedReplicas") == n and st.get("replicas") == n and
                st.get("availableReplicas") == n)

    with Scenario(cluster, results, "rollout") as s:
        cluster.kubectl(["set", "image", "deployment/big", "c=nginx:2"])
        s.done(poll("rollout", complete, args.timeout))


def run_daemonset(cluster, args, results):
    path = "/apis/apps/v1/namespaces/%s/daemonsets/agent" % NS
    with Scenario(cluster, results, "daemonset") as s:
        status, body = cluster.api.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % NS,
                                        DAEMONSET)
        if status != 201:
            raise SystemExit("create DaemonSet: %d %s" % (status, body[:200]))
        t = poll("numberReady", lambda: cluster.get(path).get("status", {}).get(
            "numberReady") == args.nodes, args.timeout)
        running, on_nodes = count_pods(cluster, "app%3Dagent")
        s.done(t, "; %d pods Running on %d nodes" % (running, on_nodes))


def run_heartbeat(cluster, args, results):
    with Scenario(cluster, results, "heartbeat") as s:
        time.sleep(args.heartbeat_seconds)
        cpu = cluster.cpu() - s.cpu0
        s.done(args.heartbeat_seconds, "; %.1f%% of one core" % (
            100.0 * cpu / args.heartbeat_seconds))


RUNNERS = {"deployment": run_deployment, "rollout": run_rollout, "daemonset": run_daemonset,
           "heartbeat": run_heartbeat}


def one_run(args, results):
    extra = ["--pod-start-delay", args.pod_start_delay] + args.up_arg
    t0 = time.time()
    cluster = Cluster(os.path.abspath(args.berth), args.nodes, extra)
    try:
        poll("nodes Ready", lambda: ready_nodes(cluster) >= args.nodes, args.timeout)
        print("  %d nodes Ready after %.1f s" % (args.nodes, time.time() - t0), flush=True)
        time.sleep(args.settle)  # first leases and node statuses written: measure the rest
        for name in args.scenarios.split(","):
            RUNNERS[name](cluster, args, results)
        rss = cluster.peak_rss_mib()
        results.setdefault("peak_rss_mib", []).append((rss, None, None))
        print("  peak RSS of berth up: %.0f MiB" % rss, flush=True)
    finally:
        cluster.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("berth")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--replicas", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--scenarios", default="deployment,rollout,daemonset")
    ap.add_argument("--heartbeat-seconds", type=float, default=30)
    ap.add_argument("--pod-start-delay", default="500ms")
    ap.add_argument("--settle", type=float, default=3, help="seconds between nodes Ready and "
                    "the first scenario")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--up-arg", action="append", default=[],
                    help="extra argument for berth up (repeatable)")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = ap.parse_args()
    for name in args.scenarios.split(","):
        if name not in RUNNERS:
            raise SystemExit("unknown scenario %r (have %s)" % (name, ", ".join(RUNNERS)))
    results = {}
    for i in range(args.runs):
        print("run %d: %d nodes, %d replicas" % (i + 1, args.nodes, args.replicas), flush=True)
        one_run(args, results)
    if args.runs > 1:
        for name, values in results.items():
            secs = [v[0] for v in values if v[0] is not None]
            if secs:
                print("median %-10s %.2f (of %d: %s)" % (
                    name, statistics.median(secs), len(values),
                    " ".join("%.2f" % v for v in secs)))
    if args.json:
        print(json.dumps({k: [list(v) for v in vs] for k, vs in results.items()}))


if __name__ == "__main__":
    main()
