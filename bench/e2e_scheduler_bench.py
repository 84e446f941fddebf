#!/usr/bin/env python3
"""End-to-end benchmark: `berth scheduler` against the API server of `berth up`.

Usage: e2e_scheduler_bench.py BERTH [--api-bench build/berth_api_bench] [--nodes 5000]
                              [--running 1000] [--pods 5000] [--clients 16] [--runs 1]
                              [--embedded]

SchedulingBasic shape (scheduler_perf): NODES nodes, RUNNING pods already bound, then PODS new
pods created by CLIENTS concurrent keep-alive HTTPS connections. The objects are created by
berth_api_bench's load mode (C++), so the numbers are Berth's, not a load generator's. Reports:
  * create throughput (pods/s the API server accepted),
  * scheduling throughput from the first create to the last pod bound (seen on a watch),
  * the work that trails the last bind (the scheduler's events, written on their own threads)
    and how many Scheduled events were written,
  * the scheduler process's CPU time per pod, that trailing work included, and its peak RSS
    (it runs as its own process),
  * the scheduler's pod_scheduling_sli_duration_seconds percentiles (from its /metrics),
  * the binding round trip p50/p99 measured by a client binding pods itself.
Not a timed test: numbers go to docs/performance.md.
"""
import argparse
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Api:
    def __init__(self, data_dir, port):
        self.port = port
        self.token = open(os.path.join(data_dir, "token")).read().strip()
        self.ctx = ssl.create_default_context(cafile=os.path.join(data_dir, "ca.crt"))
        self.local = threading.local()

    def conn(self):
        c = getattr(self.local, "c", None)
        if c is None:
            c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx)
            self.local.c = c
        return c

    def call(self, method, path, body=None):
        c = self.conn()
        data = json.dumps(body) if body is not None else None
        c.request(method, path, body=data, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        r = c.getresponse()
        payload = r.read()
        return r.status, payload


def pod(name, node_name=None):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
         "spec": {"containers": [{"name": "c", "image": "pause",
                                  "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


def proc_stats(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1]) / 1024
    return cpu, rss


def children_cpu():
    """CPU seconds of the finished child processes (the load generator runs to completion)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def histogram_quantiles(metrics_text, name, quantiles):
    """Quantiles of a Prometheus histogram (all label sets summed), interpolated within buckets
    as histogram_quantile() does."""
    buckets = {}
    for line in metrics_text.splitlines():
        if not line.startswith(name + "_bucket{"):
            continue
        labels, value = line.rsplit(" ", 1)
        le = labels.split('le="', 1)[1].split('"', 1)[0]
        bound = float("inf") if le == "+Inf" else float(le)
        buckets[bound] = buckets.get(bound, 0) + float(value)
    bounds = sorted(buckets)
    if not bounds or buckets[bounds[-1]] == 0:
        return [float("nan")] * len(quantiles)
    total = buckets[bounds[-1]]
    out = []
    for q in quantiles:
        rank = q * total
        prev_bound, prev_count = 0.0, 0.0
        for b in bounds:
            if buckets[b] >= rank:
                if b == float("inf"):
                    out.append(prev_bound)
                else:
                    width = buckets[b] - prev_count
                    frac = (rank - prev_count) / width if width else 1.0
                    out.append(prev_bound + (b - prev_bound) * frac)
                break
            prev_bound, prev_count = b, buckets[b]
    return out


def load(api_bench, tmp, port, kind, count, clients, prefix="new-", bound_nodes=0,
         wait_bound=False):
    cmd = [api_bench, "--server", "https://127.0.0.1:%d" % port,
           "--ca", os.path.join(tmp, "ca.crt"), "--token-file", os.path.join(tmp, "token"),
           "--kind", kind, "--count", str(count), "--clients", str(clients), "--prefix", prefix]
    if bound_nodes:
        cmd += ["--bound-nodes", str(bound_nodes)]
    if wait_bound:
        cmd.append("--wait-bound")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def wait_idle(pids, quiet_cpu=0.003, interval=0.1, limit=60):
    """Waits until none of `pids` used more than `quiet_cpu` CPU seconds in `interval`;
    returns the seconds waited (the work trailing the last bind: the scheduler's events)."""
    t0 = time.time()
    last = [proc_stats(pid)[0] for pid in pids]
    while time.time() - t0 < limit:
        time.sleep(interval)
        now = [proc_stats(pid)[0] for pid in pids]
        if all(n - l <= quiet_cpu for n, l in zip(now, last)):
            return time.time() - t0 - interval
        last = now
    return time.time() - t0


def measure_pods(args, tmp, port, pids):
    """Creates the measured pods and waits until all are bound, then until the processes are
    idle again. Prints the create and scheduling rates; returns the CPU seconds each of `pids`
    used for the pods (the events written after the last bind included), their peak RSS, and
    the load generator's CPU seconds."""
    before = [proc_stats(pid)[0] for pid in pids]
    load_cpu0 = children_cpu()
    r = load(args.api_bench, tmp, port, "pods", args.pods, args.clients, wait_bound=True)
    at_last_bound = [proc_stats(pid)[0] for pid in pids]
    load_cpu = children_cpu() - load_cpu0
    trailing_s = wait_idle(pids)
    after = [proc_stats(pid) for pid in pids]
    create_s = r["last_create"] - r["first_create"]
    bound_s = r["last_bound"] - r["first_create"]
    print("create: %d pods in %.2fs = %.0f pods/s (%d clients)" % (
        args.pods, create_s, args.pods / create_s, args.clients))
    print("schedule: first create to last bound %.2fs = %.0f pods/s" % (
        bound_s, args.pods / bound_s))
    # Events are written on their own threads (as client-go's broadcaster does): some are
    # still being written after the last bind. Their CPU counts, though not in the rate.
    trailing = sum(a[0] - b for a, b in zip(after, at_last_bound))
    status, body = Api(tmp, port).call("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    scheduled = sum(1 for e in json.loads(body)["items"]
                    if e.get("reason") == "Scheduled"
                    and e.get("regarding", {}).get("name", "").startswith("new-"))
    print("work after the last bind (events): %.2fs, %.3f ms CPU per pod; %d of %d Scheduled "
          "events written" % (trailing_s, trailing * 1000 / args.pods, scheduled, args.pods))
    return [a[0] - b for a, b in zip(after, before)], [a[1] for a in after], load_cpu


def run_embedded(args, tmp, port, up):
    """`berth up` as users run it: the scheduler in the API server's process, still talking
    to it over HTTPS. Only the process's CPU as a whole can be told apart."""
    time.sleep(2)  # the scheduler's informers synced
    cpu, rss, load_cpu = measure_pods(args, tmp, port, [up.pid])
    print("berth up (API server and scheduler): %.3f ms CPU per pod, peak RSS %.0f MiB; "
          "load generator: %.3f ms CPU per pod" % (cpu[0] * 1000 / args.pods, rss[0],
                                                  load_cpu * 1000 / args.pods))


def run_once(args):
    tmp = tempfile.mkdtemp(prefix="berth-bench-")
    port = free_port()
    metrics_port = free_port()
    up_cmd = [args.berth, "up", "--data-dir", tmp, "--port", str(port), "--demo-nodes", "0"]
    if not args.embedded:
        up_cmd.append("--no-scheduler")
    up = subprocess.Popen(up_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sched = None
    try:
        while not os.path.exists(os.path.join(tmp, "kubeconfig")):
            time.sleep(0.1)
        api = Api(tmp, port)
        t = time.time()
        load(args.api_bench, tmp, port, "nodes", args.nodes, args.clients)
        load(args.api_bench, tmp, port, "pods", args.running, args.clients, prefix="running-",
             bound_nodes=args.nodes)
        print("setup: %d nodes, %d running pods in %.1fs" % (args.nodes, args.running,
                                                             time.time() - t))
        if args.embedded:
            run_embedded(args, tmp, port, up)
            return
        sched = subprocess.Popen([args.berth, "scheduler", "--kubeconfig",
                                  os.path.join(tmp, "kubeconfig"), "--leader-elect=false",
                                  "--secure-port=%d" % metrics_port, "--serve-plain-http",
                                  "--kube-api-qps=100000", "--kube-api-burst=100000"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)  # informers synced
        cpu, rss, load_cpu = measure_pods(args, tmp, port, [sched.pid, up.pid])
        print("scheduler process: %.3f ms CPU per pod, peak RSS %.0f MiB" % (
            cpu[0] * 1000 / args.pods, rss[0]))
        # The three processes share the machine's cores: their sum per pod is what bounds the
        # end-to-end rate.
        print("API server: %.3f ms CPU per pod; load generator: %.3f ms CPU per pod" % (
            cpu[1] * 1000 / args.pods, load_cpu * 1000 / args.pods))
        c = http.client.HTTPConnection("127.0.0.1", metrics_port)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        p50, p90, p99 = histogram_quantiles(
            text, "scheduler_pod_scheduling_sli_duration_seconds", [0.5, 0.9, 0.99])
        print("pod_scheduling_sli_duration_seconds: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms" % (
            p50 * 1000, p90 * 1000, p99 * 1000))
        if args.skip_binding:
            return
        # Binding round trip: pods of another scheduler, bound by this client.
        lat = []
        for i in range(500):
            api.call("POST", "/api/v1/namespaces/default/pods",
                     dict(pod("manual-%d" % i), spec=dict(pod("x")["spec"],
                                                          schedulerName="bench")))
        for i in range(500):
            b = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual-%d" % i},
                 "target": {"apiVersion": "v1", "kind": "Node", "name": "node-00001"}}
            t0 = time.perf_counter()
            s, _ = api.call("POST", "/api/v1/namespaces/default/pods/manual-%d/binding" % i, b)
            lat.append((time.perf_counter() - t0) * 1000)
            assert s == 201, s
        lat.sort()
        print("binding round trip: p50 %.2f ms, p99 %.2f ms" % (lat[len(lat) // 2],
                                                               lat[int(len(lat) * 0.99)]))
    finally:
        if sched:
            sched.send_signal(signal.SIGTERM)
            sched.wait()
        up.send_signal(signal.SIGINT)
        up.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--api-bench", default=None,
                    help="berth_api_bench (default: beside BERTH)")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--running", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--skip-binding", action="store_true",
                    help="skip the binding round trip measure")
    ap.add_argument("--embedded", action="store_true",
                    help="run `berth up` with its own scheduler instead of `berth up "
                         "--no-scheduler` and a `berth scheduler` process")
    args = ap.parse_args()
    if args.api_bench is None:
        args.api_bench = os.path.join(os.path.dirname(os.path.abspath(args.berth)),
                                      "berth_api_bench")
    for i in range(args.runs):
        if args.runs > 1:
            print("run %d" % (i + 1))
        run_once(args)


if __name__ == "__main__":
    main()
