#!/usr/bin/env python3
"""`berth scheduler` with its connections cut every few hundred milliseconds: every pod is bound
exactly once.

Usage: run_watch_cut_e2e.py BERTH [PODS [NODES]]

Starts `berth up --no-scheduler`, creates NODES nodes (default 300), then starts `berth scheduler`
whose kubeconfig points at a TCP proxy on 127.0.0.1. The proxy forwards the TLS stream byte for
byte (so it works in front of any API server) and cuts every open connection (watches, pooled
keep-alive connections, requests in flight) every 200-500 ms. PODS pods (default 10,000) are
created concurrently, straight at the API server. Checks: every pod bound; exactly one Scheduled
event and one "Successfully bound" log line per pod; no node's requests above its allocatable;
the proxy cut many connections and the pod watch resumed many times.
"""
import base64
import collections
import http.client
import json
import multiprocessing
import os
import random
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_scheduler_e2e import Scheduler  # noqa: E402
from run_up_e2e import Fail, Up, free_port, wait_for  # noqa: E402

NAMESPACE = "cuts"
CREATORS = 4  # connections per creating process
CREATOR_PROCESSES = 4


class Api:
    """A small REST client from a kubeconfig (token or client certificate), one keep-alive
    connection per thread."""

    def __init__(self, kubeconfig, tmp):
        cfg = json.load(open(kubeconfig))
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        url = cluster["server"]
        if not url.startswith("https://"):
            raise Fail("expected an https server in %s" % kubeconfig)
        self.host, port = url[len("https://"):].rstrip("/").rsplit(":", 1)
        self.port = int(port)
        self.ctx = ssl.create_default_context()
        if "certificate-authority-data" in cluster:
            self.ctx.load_verify_locations(
                cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        elif "certificate-authority" in cluster:
            self.ctx.load_verify_locations(cafile=cluster["certificate-authority"])
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if "token" in user:
            self.headers["Authorization"] = "Bearer " + user["token"]
        if "client-certificate-data" in user:
            crt, key = os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key")
            open(crt, "wb").write(base64.b64decode(user["client-certificate-data"]))
            open(key, "wb").write(base64.b64decode(user["client-key-data"]))
            self.ctx.load_cert_chain(crt, key)
        self.local = threading.local()

    def request(self, method, path, body=None, ok=(200, 201)):
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(5):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                   timeout=60)
                self.local.conn = conn
            try:
                conn.request(method, path, body=data, headers=self.headers)
                resp = conn.getresponse()
                text = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                time.sleep(0.1 * (attempt + 1))
                continue
            if resp.status == 429 or resp.status >= 500:
                time.sleep(0.2 * (attempt + 1))
                continue
            if resp.status not in ok:
                raise Fail("%s %s: %d %s" % (method, path, resp.status, text[:300]))
            return resp.status, json.loads(text) if text else None
        raise Fail("%s %s: no answer after 5 attempts" % (method, path))

    def list(self, path):
        items, cont = [], ""
        while True:
            sep = "&" if "?" in path else "?"
            page = path + sep + "limit=2000" + ("&continue=" + cont if cont else "")
            _, doc = self.request("GET", page, ok=(200,))
            items += doc.get("items") or []
            cont = (doc.get("metadata") or {}).get("continue")
            if not cont:
                return items


class CuttingProxy:
    """Forwards TCP connections to the API server and, while `cutting` is set, cuts all of them
    every 200-500 ms. Runs in a process of its own, so that the test's clients do not slow it."""

    def __init__(self, upstream_host, upstream_port, seed=12):
        ctx = multiprocessing.get_context("fork")
        self.upstream = (upstream_host, upstream_port)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(256)
        self.port = self.listener.getsockname()[1]
        self.cutting = ctx.Event()
        self.stopping = ctx.Event()
        self.stats = ctx.Array("l", 3)  # accepted, cut, rounds
        self.seed = seed
        self.proc = ctx.Process(target=self.serve, daemon=True)
        self.proc.start()
        self.listener.close()

    accepted = property(lambda self: self.stats[0])
    cut = property(lambda self: self.stats[1])
    rounds = property(lambda self: self.stats[2])

    # ---- in the proxy's process
    def serve(self):
        self.mu = threading.Lock()
        self.open = set()  # (client socket, upstream socket)
        threading.Thread(target=self.accept_loop, daemon=True).start()
        rng = random.Random(self.seed)
        while not self.stopping.wait(rng.uniform(0.2, 0.5)):
            if not self.cutting.is_set():
                continue
            with self.mu:
                pairs = list(self.open)
            n = sum(1 for p in pairs if self.close(p))
            with self.stats.get_lock():
                self.stats[1] += n
                self.stats[2] += 1
        with self.mu:
            pairs = list(self.open)
        for p in pairs:
            self.close(p)

    def accept_loop(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            pair = (client, upstream)
            with self.mu:
                self.open.add(pair)
            with self.stats.get_lock():
                self.stats[0] += 1
            threading.Thread(target=self.pump, args=(client, upstream, pair), daemon=True).start()
            threading.Thread(target=self.pump, args=(upstream, client, pair), daemon=True).start()

    def pump(self, src, dst, pair):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        self.close(pair)

    def close(self, pair):
        with self.mu:
            known = pair in self.open
            self.open.discard(pair)
        for s in pair:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return known

    # ---- in the test's process
    def stop(self):
        self.stopping.set()
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()


def node(name):
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": alloc, "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, cpu_m):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "cuts"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "%dm" % cpu_m,
                                                                "memory": "64Mi"}}}]}}


def in_parallel(n, fn):
    errors = []

    def run(i):
        try:
            fn(i)
        except Exception as e:  # reported below, in the main thread
            errors.append(e)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise Fail("creating objects: %s" % errors[0])


def cpu_millis(q):
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def memory_bytes(q):
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    for u, f in units.items():
        if q.endswith(u):
            return int(q[:-2]) * f
    return int(q)


def run(berth, tmp, pods, nodes):
    t0 = time.time()
    up = Up(berth, tmp, demo_nodes=0, extra=["--no-scheduler"])
    proxy = sched = None
    try:
        api = Api(up.kubeconfig, tmp)
        api.request("POST", "/api/v1/namespaces",
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        names = ["cut-node-%03d" % i for i in range(nodes)]
        in_parallel(CREATORS, lambda w: [api.request("POST", "/api/v1/nodes", node(n))
                                         for n in names[w::CREATORS]])

        print("API server up, %d nodes created after %.1f s" % (nodes, time.time() - t0),
              flush=True)
        proxy = CuttingProxy(api.host, api.port)
        cfg = json.load(open(up.kubeconfig))
        cfg["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:%d" % proxy.port
        kubeconfig = os.path.join(tmp, "through-proxy.kubeconfig")
        json.dump(cfg, open(kubeconfig, "w"))
        # qps/burst as a large cluster would set them: the default 50/s would take minutes.
        sched = Scheduler(berth, ["--kubeconfig", kubeconfig, "--leader-elect=false",
                                  "--secure-port=0", "--kube-api-qps=20000",
                                  "--kube-api-burst=20000", "-v=2"],
                          os.path.join(tmp, "scheduler.log"))
        # Ready once it has seen the nodes; cutting starts after (a start-up under cuts is a
        # different check: informers must still sync, which the cuts during the run cover).
        time.sleep(1)
        proxy.cutting.set()

        # Sizes 50m..150m, 100m on average: the pods fill about 85% of the nodes' CPU.
        sizes = [50 + (i * 37) % 101 for i in range(pods)]
        pod_names = ["cut-pod-%05d" % i for i in range(pods)]
        start = time.time()
        # Several processes, each with a few connections: one Python process tops out well
        # below what the API server accepts.
        ctx = multiprocessing.get_context("fork")

        def create_share(p):
            in_parallel(CREATORS, lambda w: [
                api.request("POST", "/api/v1/namespaces/%s/pods" % NAMESPACE,
                            pod(pod_names[i], sizes[i]))
                for i in range(p * CREATORS + w, pods, CREATORS * CREATOR_PROCESSES)])
        procs = [ctx.Process(target=create_share, args=(p,)) for p in range(CREATOR_PROCESSES)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        if any(p.exitcode != 0 for p in procs):
            raise Fail("creating pods failed: exit codes %r" % [p.exitcode for p in procs])
        created = time.time() - start

        def unbound():
            left = api.list("/api/v1/namespaces/%s/pods?fieldSelector=spec.nodeName%%3D"
                            % NAMESPACE)
            return len(left) == 0 or (len(left), sched.proc.poll())
        left = None
        deadline = time.time() + 90
        while time.time() < deadline:
            left = unbound()
            if left is True or sched.proc.poll() is not None:
                break
            time.sleep(0.5)
        bound_after = time.time() - start
        if left is not True:
            raise Fail("not all pods bound after %.0f s (unbound, exit code): %r\n%s"
                       % (bound_after, left, sched.text()[-3000:]))
        proxy.cutting.clear()
        print("created %d pods in %.1f s, all bound after %.1f s; proxy: %d connections, "
              "%d cut in %d rounds" % (pods, created, bound_after, proxy.accepted, proxy.cut,
                                       proxy.rounds), flush=True)

        all_pods = api.list("/api/v1/namespaces/%s/pods" % NAMESPACE)
        if len(all_pods) != pods or any(not p["spec"].get("nodeName") for p in all_pods):
            raise Fail("%d pods, %d bound" % (len(all_pods),
                                               sum(1 for p in all_pods if p["spec"].get("nodeName"))))
        # Node accounting: requests on each node within its allocatable.
        use = collections.defaultdict(lambda: [0, 0, 0])
        for p in all_pods:
            req = p["spec"]["containers"][0]["resources"]["requests"]
            u = use[p["spec"]["nodeName"]]
            u[0] += cpu_millis(req["cpu"])
            u[1] += memory_bytes(req["memory"])
            u[2] += 1
        for n, (cpu, mem, count) in use.items():
            if n not in names:
                raise Fail("pod bound to unknown node %s" % n)
            if cpu > 4000 or mem > 8 << 30 or count > 110:
                raise Fail("node %s over-committed: %dm cpu, %d bytes, %d pods"
                           % (n, cpu, mem, count))

        # Exactly one Scheduled event per pod (the event writer runs behind the bindings).
        def scheduled_events():
            # One event is served by both APIs (by name); events.k8s.io/v1 is what Berth writes
            # when the server has it, core/v1 otherwise.
            per_pod = collections.Counter()
            for path, ref in (("/apis/events.k8s.io/v1/namespaces/%s/events" % NAMESPACE,
                               "regarding"),
                              ("/api/v1/namespaces/%s/events" % NAMESPACE, "involvedObject")):
                try:
                    items = api.list(path + "?fieldSelector=reason%3DScheduled")
                except Fail:
                    continue
                for e in items:
                    if e.get("reason") == "Scheduled":
                        per_pod[(e.get(ref) or {}).get("name")] += 1
                if items:
                    return per_pod
            return per_pod

        last = [None, time.time()]

        def settled():
            per_pod = scheduled_events()
            total = sum(per_pod.values())
            if total != last[0]:
                last[0], last[1] = total, time.time()
            quiet = time.time() - last[1]
            return per_pod if (total >= pods and quiet > 2) or quiet > 10 else None
        t = time.time()
        per_pod = wait_for("Scheduled events", settled, timeout=60, interval=1)
        print("events settled after %.1f s more" % (time.time() - t), flush=True)
        twice = [n for n, c in per_pod.items() if c > 1]
        missing = [n for n in pod_names if per_pod.get(n, 0) == 0]
        if twice or missing or len(per_pod) != pods:
            for line in sched.text().splitlines():
                if any(n + '"' in line or n + " " in line for n in (twice + missing)[:5]):
                    print("  " + line[:400])
            for line in sched.text().splitlines():
                if "writing event" in line:
                    print("  " + line[:400])
            raise Fail("Scheduled events: %d pods twice (%s), %d without (%s)"
                       % (len(twice), twice[:5], len(missing), missing[:5]))

        log = sched.text()
        bound_lines = collections.Counter()
        for line in log.splitlines():
            if '"Successfully bound pod to node"' in line:
                bound_lines[line.split(' pod="', 1)[1].split('"', 1)[0]] += 1
        if len(bound_lines) != pods or any(c != 1 for c in bound_lines.values()):
            raise Fail("\"Successfully bound\" lines: %d pods, %d more than once"
                       % (len(bound_lines), sum(1 for c in bound_lines.values() if c > 1)))

        # The cuts were real and reached the watches.
        pod_watch_breaks = log.count("watch of Pod ended")
        print("pod watch resumed %d times, node watch %d times; %d bindings resent"
              % (pod_watch_breaks, log.count("watch of Node ended"),
                 log.count("is retried")), flush=True)
        if proxy.rounds < 10 or proxy.cut < 50:
            raise Fail("too few cuts: %d connections in %d rounds" % (proxy.cut, proxy.rounds))
        if pod_watch_breaks < 5:
            raise Fail("the pod watch was resumed only %d times" % pod_watch_breaks)
        if sched.proc.poll() is not None:
            raise Fail("the scheduler exited with %d" % sched.proc.returncode)
    finally:
        if sched:
            sched.stop()
        if proxy:
            proxy.stop()
        up.stop()


def main():
    berth = os.path.abspath(sys.argv[1])
    pods = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    tmp = tempfile.mkdtemp(prefix="berth-cut-e2e-")
    t = time.time()
    try:
        run(berth, tmp, pods, nodes)
        print("PASS watch_cut_%d_pods (%.1fs)" % (pods, time.time() - t))
        print("1 passed, 0 failed")
    except (Fail, subprocess.TimeoutExpired, KeyError, ValueError) as e:
        print("FAIL watch_cut_%d_pods: %s" % (pods, e))
        print("0 passed, 1 failed")
        sys.exit(1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
