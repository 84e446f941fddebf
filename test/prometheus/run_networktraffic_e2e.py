#!/usr/bin/env python3
"""NetworkTraffic against a real Prometheus (Debian's package).

Usage: run_networktraffic_e2e.py BERTH

Serves an exporter with per-node node_network_receive_bytes_total on 127.0.0.1, starts
Prometheus on an ephemeral port scraping it every second, then runs `berth simulate` with a
profile scoring only with NetworkTraffic: the quietest node must win. Stops Prometheus and runs
again: the pod is still scheduled (the fallback) and the reason is reported once.
Skips (exit 0 with a SKIP line) when no prometheus binary is installed.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Bytes per second each node receives on eth0.
TRAFFIC = {"node-quiet": 1000, "node-busy": 900000, "node-mid": 300000}
START = time.time()


class Exporter(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        lines = ["# TYPE node_network_receive_bytes_total counter"]
        for node, base in TRAFFIC.items():
            lines.append('node_network_receive_bytes_total{kubernetes_node="%s",device="eth0"} %d'
                         % (node, int(base * (time.time() - START + 1))))
            lines.append('node_network_receive_bytes_total{kubernetes_node="%s",device="lo"} 1'
                         % node)
        body = ("\n".join(lines) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}


def main():
    berth = os.path.abspath(sys.argv[1])
    prom_bin = shutil.which("prometheus")
    if not prom_bin:
        print("SKIP: no prometheus binary (apt-get install prometheus)")
        return 0
    tmp = tempfile.mkdtemp(prefix="berth-prom-")
    exporter = ThreadingHTTPServer(("127.0.0.1", 0), Exporter)
    threading.Thread(target=exporter.serve_forever, daemon=True).start()
    prom_port = free_port()
    with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
        f.write("global: {scrape_interval: 1s}\nscrape_configs:\n- job_name: nodes\n"
                "  static_configs: [{targets: ['127.0.0.1:%d']}]\n" % exporter.server_address[1])
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    prom = subprocess.Popen([prom_bin, "--config.file", os.path.join(tmp, "prometheus.yml"),
                             "--storage.tsdb.path", os.path.join(tmp, "data"),
                             "--web.listen-address", "127.0.0.1:%d" % prom_port],
                            stdout=log, stderr=subprocess.STDOUT)
    failed = []
    try:
        url = "http://127.0.0.1:%d" % prom_port
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                q = urllib.request.quote('count(node_network_receive_bytes_total{device="eth0"})')
                with urllib.request.urlopen(url + "/api/v1/query?query=" + q, timeout=2) as r:
                    res = json.loads(r.read())["data"]["result"]
                    if res and float(res[0]["value"][1]) == 3:
                        break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            raise SystemExit("FAIL: prometheus has no samples after 60 s")
        time.sleep(2)  # a few samples per series
        manifests = os.path.join(tmp, "cluster.json")
        with open(manifests, "w") as f:
            for o in [node("node-busy"), node("node-mid"), node("node-quiet"), pod("p")]:
                f.write(json.dumps(o) + "\n")
        cfg = os.path.join(tmp, "cfg.yaml")
        with open(cfg, "w") as f:
            f.write("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NetworkTraffic, weight: 5}]
    score:
      disabled: [{name: "*"}]
      enabled: [{name: NetworkTraffic, weight: 5}]
  pluginConfig:
  - name: NetworkTraffic
    args: {prometheusAddress: "%s", networkInterface: eth0, timeRangeInMinutes: 1}
""" % url)

        # The tutorials' form: v1, the plugin under `score` alone, everything else disabled
        # (its PreScore never runs).
        score_only = os.path.join(tmp, "score-only.yaml")
        with open(score_only, "w") as f:
            f.write("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NetworkTraffic
      disabled:
      - name: "*"
  pluginConfig:
  - name: NetworkTraffic
    args: {prometheusAddress: "%s", networkInterface: eth0, timeRangeInMinutes: 1}
""" % url)

        def simulate(config=cfg):
            p = subprocess.run([berth, "simulate", "--config", config, "-f", manifests,
                                "-o", "json"], capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                raise SystemExit("FAIL: simulate: " + p.stderr)
            return json.loads(p.stdout)["results"][0], p.stderr

        for name, config in (("multiPoint", cfg), ("score only", score_only)):
            r, _ = simulate(config)
            scores = {n: s["plugins"].get("NetworkTraffic")
                      for n, s in r.get("score", {}).items()}
            if r.get("node") != "node-quiet":
                failed.append("%s: the quietest node did not win: %r %r" %
                              (name, r.get("node"), scores))
            elif not (scores["node-quiet"] > scores["node-mid"] > scores["node-busy"]):
                failed.append("%s: scores not ordered by traffic: %r" % (name, scores))
            else:
                print("PASS %s: quietest node wins %r" % (name, scores))
        prom.terminate()
        prom.wait(timeout=30)
        t = time.time()
        r, err = simulate()
        if r.get("result") != "Scheduled":
            failed.append("not scheduled with Prometheus down: %r" % r)
        elif "NetworkTraffic: Prometheus did not answer" not in err or err.count("NetworkTraffic:") != 1:
            failed.append("fallback not reported once: %r" % err)
        elif time.time() - t > 10:
            failed.append("scheduling with Prometheus down took %.1fs" % (time.time() - t))
        else:
            print("PASS Prometheus down: scheduled by the fallback, reported once")
    finally:
        if prom.poll() is None:
            prom.kill()
        exporter.shutdown()
        log.close()
        if failed:
            print(open(os.path.join(tmp, "prometheus.log")).read()[-2000:])
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failed:
        print("FAIL " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
