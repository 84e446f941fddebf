#!/usr/bin/env python3
"""End-to-end benchmark: `berth scheduler` against the API server of `berth up`.

Usage: e2e_scheduler_bench.py BERTH [--nodes 5000] [--running 1000] [--pods 5000] [--clients 8]

SchedulingBasic shape (scheduler_perf): NODES nodes, RUNNING pods already bound, then PODS new
pods created by CLIENTS concurrent connections. Reports:
  * create throughput (pods/s the API server accepted),
  * scheduling throughput from the first create to the last pod bound,
  * the scheduler process's CPU time per pod and peak RSS (it runs as its own process),
  * the binding round trip p50/p99 measured by a client binding pods itself.
Not a timed test: numbers go to docs/performance.md.
"""
import argparse
import http.client
import json
import os
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


def node(i):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-%05d" % i,
                         "labels": {"kubernetes.io/hostname": "node-%05d" % i,
                                    "topology.kubernetes.io/zone": "zone-%d" % (i % 10)}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, node_name=None):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
         "spec": {"containers": [{"name": "c", "image": "pause",
                                  "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


def parallel(api, n_clients, items, fn):
    lock = threading.Lock()
    it = iter(items)

    def worker():
        while True:
            with lock:
                x = next(it, None)
            if x is None:
                return
            fn(x)

    ts = [threading.Thread(target=worker) for _ in range(n_clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--running", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=8)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="berth-bench-")
    port = free_port()
    up = subprocess.Popen([args.berth, "up", "--data-dir", tmp, "--port", str(port),
                           "--no-scheduler"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sched = None
    try:
        while not os.path.exists(os.path.join(tmp, "kubeconfig")):
            time.sleep(0.1)
        api = Api(tmp, port)
        t = time.time()
        parallel(api, args.clients, range(args.nodes),
                 lambda i: api.call("POST", "/api/v1/nodes", node(i)))
        parallel(api, args.clients, range(args.running),
                 lambda i: api.call("POST", "/api/v1/namespaces/default/pods",
                                    pod("running-%d" % i, "node-%05d" % (i % args.nodes))))
        print("setup: %d nodes, %d running pods in %.1fs" % (args.nodes, args.running,
                                                             time.time() - t))
        sched = subprocess.Popen([args.berth, "scheduler", "--kubeconfig",
                                  os.path.join(tmp, "kubeconfig"), "--leader-elect=false",
                                  "--secure-port=0", "--kube-api-qps=100000",
                                  "--kube-api-burst=100000"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)  # informers synced
        cpu0, _ = proc_stats(sched.pid)
        start = time.time()
        parallel(api, args.clients, range(args.pods),
                 lambda i: api.call("POST", "/api/v1/namespaces/default/pods", pod("new-%d" % i)))
        created = time.time()
        while True:
            status, body = api.call(
                "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D&limit=1")
            items = json.loads(body)["items"]
            if not items:
                break
            time.sleep(0.05)
        done = time.time()
        cpu1, rss = proc_stats(sched.pid)
        print("create: %d pods in %.2fs = %.0f pods/s (%d clients)" % (
            args.pods, created - start, args.pods / (created - start), args.clients))
        print("schedule: first create to last bound %.2fs = %.0f pods/s" % (
            done - start, args.pods / (done - start)))
        print("scheduler process: %.3f ms CPU per pod, peak RSS %.0f MiB" % (
            (cpu1 - cpu0) * 1000 / args.pods, rss))
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


if __name__ == "__main__":
    main()
