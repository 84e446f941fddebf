#!/usr/bin/env python3
"""`berth record` against `berth up`: objects created, updated and deleted with kubectl while
recording appear as kube-scheduler-simulator recorder lines; --duration ends it; SIGINT ends
it with every line flushed; an unreachable server is a clear error.

Usage: run_record_e2e.py BERTH [CHECK ...]
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for  # noqa: E402

TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def start_record(up, path, *extra):
    return subprocess.Popen([up.berth, "record", "--kubeconfig", up.kubeconfig, "-o", path,
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def of(lines, kind, name, event=None):
    return [l for l in lines if l["resource"].get("kind") == kind
            and l["resource"]["metadata"].get("name") == name
            and (event is None or l["event"] == event)]


def check_records_changes(up):
    path = os.path.join(up.data_dir, "history.jsonl")
    rec = start_record(up, path)
    try:
        lines = wait_for("the initial list", lambda: [l for l in read_lines(path)
                                                      if l["resource"]["kind"] == "Node"])
        nodes = {l["resource"]["metadata"]["name"] for l in lines}
        up.kubectl(["create", "priorityclass", "rec-high", "--value", "1000"])
        up.kubectl(["create", "pdb", "rec-pdb", "--selector", "app=rec", "--min-available", "1"])
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "rec-pod", "namespace": "default", "labels": {"app": "rec"}},
               "spec": {"containers": [{"name": "c", "image": "pause",
                                        "resources": {"requests": {"cpu": "100m"}}}]}}
        up.kubectl(["apply", "-f", "-"], stdin=json.dumps(pod))
        wait_for("the pod bound", lambda: any(
            l["resource"].get("spec", {}).get("nodeName") for l in of(read_lines(path), "Pod", "rec-pod")))
        up.kubectl(["label", "pod", "rec-pod", "tier=front"])
        up.kubectl(["delete", "pod", "rec-pod", "--grace-period=0", "--force", "--wait=false"])
        wait_for("the pod's Delete line", lambda: of(read_lines(path), "Pod", "rec-pod", "Delete"))
        up.kubectl(["delete", "pdb", "rec-pdb"])
        wait_for("the PDB's Delete line", lambda: of(read_lines(path), "PodDisruptionBudget",
                                                     "rec-pdb", "Delete"))
    finally:
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=30)
    if rec.returncode != 0:
        raise Fail("berth record exited %d: %s" % (rec.returncode, err))
    lines = read_lines(path)
    for l in lines:
        if set(l) != {"time", "event", "resource"} or l["event"] not in ("Add", "Update", "Delete"):
            raise Fail("not a recorder line: %s" % json.dumps(l)[:200])
        if not TIME.match(l["time"]):
            raise Fail("time %r is not RFC 3339 UTC" % l["time"])
    if len(nodes) < 4:
        raise Fail("the initial list has nodes %s" % sorted(nodes))
    if not of(lines, "PriorityClass", "rec-high", "Add"):
        raise Fail("no Add line for the PriorityClass")
    events = [l["event"] for l in of(lines, "Pod", "rec-pod")]
    if events[0] != "Add" or events[-1] != "Delete" or "Update" not in events:
        raise Fail("the pod's events: %s" % events)
    labelled = [l for l in of(lines, "Pod", "rec-pod", "Update")
                if l["resource"]["metadata"].get("labels", {}).get("tier") == "front"]
    if not labelled:
        raise Fail("no Update line carries the new label")
    stub = of(lines, "Pod", "rec-pod", "Delete")[0]["resource"]
    if stub != {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "rec-pod", "namespace": "default"}}:
        raise Fail("the Delete line's resource: %s" % stub)
    # berth up serves resource.k8s.io/v1, so every kind is recorded and none is noted as
    # not served.
    if "not served" in err or "ResourceClaim, ResourceSlice" not in err:
        raise Fail("ResourceClaims and ResourceSlices not recorded: %s" % err)
    if "changes written" not in err:
        raise Fail("no summary at the end: %s" % err)


def check_duration_ends_it(up):
    path = os.path.join(up.data_dir, "short.jsonl")
    rec = start_record(up, path, "--duration", "1s")
    _, err = rec.communicate(timeout=30)
    if rec.returncode != 0:
        raise Fail("--duration 1s exited %d: %s" % (rec.returncode, err))
    if not of(read_lines(path), "Namespace", "default", "Add"):
        raise Fail("the short recording lacks the default namespace")


def check_unreachable_is_an_error(up):
    p = subprocess.run([up.berth, "record", "--master", "https://127.0.0.1:1", "--kubeconfig",
                        up.kubeconfig, "-o", os.path.join(up.data_dir, "none.jsonl")],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 1 or "unreachable" not in p.stderr:
        raise Fail("unreachable server: rc %d, %s" % (p.returncode, p.stderr.strip()))


# The bin-packing configuration docs/compare.md uses, as a user runs it.
with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "compare", "binpack.yaml")) as _f:
    BINPACK = _f.read()


def check_replay_matches_simulate(up):
    """A recording of pods arriving on berth up, replayed under the default configuration and
    bin packing: compare --replay reports exactly the pods two simulate --replay runs place
    differently, each explained."""
    path = os.path.join(up.data_dir, "replay.jsonl")
    rec = start_record(up, path)
    try:
        wait_for("the initial list", lambda: of(read_lines(path), "Namespace", "default"))
        for i in range(12):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"replay-{i}", "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "pause", "resources": {
                       "requests": {"cpu": "500m", "memory": "256Mi"}}}]}}
            up.kubectl(["apply", "-f", "-"], stdin=json.dumps(pod))
        up.kubectl(["delete", "pod", "replay-0", "--wait=false"])
        wait_for("the pods' Add lines", lambda: len([
            l for l in read_lines(path) if l["resource"]["kind"] == "Pod"
            and l["resource"]["metadata"]["name"].startswith("replay-") and l["event"] == "Add"]) == 12)
    finally:
        rec.send_signal(signal.SIGINT)
        rec.communicate(timeout=30)
    binpack = os.path.join(up.data_dir, "binpack.yaml")
    with open(binpack, "w") as f:
        f.write(BINPACK)
    out = subprocess.run([up.berth, "compare", "--config", "default", "--config", binpack,
                          "--replay", path, "-o", "json"], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise Fail("compare --replay: rc %d: %s" % (out.returncode, out.stderr))
    report = json.loads(out.stdout)
    sims = []
    for cfg in ([], ["--config", binpack]):
        s = subprocess.run([up.berth, "simulate", *cfg, "--replay", path, "-o", "json"],
                           capture_output=True, text=True, timeout=300)
        if s.returncode != 0:
            raise Fail("simulate --replay: %s" % s.stderr)
        sims.append({r["pod"]: r.get("node") for r in json.loads(s.stdout)["results"]})
    want = sorted(p for p in sims[0] if sims[0][p] != sims[1].get(p))
    got = sorted(d["pod"] for d in report["differences"])
    if not want or got != want:
        raise Fail("differences %s, simulate runs differ on %s" % (got, want))
    for d in report["differences"]:
        for c, conf in enumerate(d["configurations"]):
            if conf.get("node") != sims[c][d["pod"]] or not conf["explained"]:
                raise Fail("%s under configuration %d: %s" % (d["pod"], c, conf))
    confs = report["configurations"]
    if confs[1]["nodesUsed"] >= confs[0]["nodesUsed"]:
        raise Fail("bin packing used %d nodes, the default %d" % (confs[1]["nodesUsed"],
                                                                 confs[0]["nodesUsed"]))
    if not all(c["pendingOverTime"] for c in confs):
        raise Fail("no pending-over-time series")
    page = os.path.join(up.data_dir, "replay.html")
    with open(page, "w") as f:
        f.write(subprocess.run([up.berth, "compare", "--config", "default", "--config", binpack,
                                "--replay", path, "-o", "html"], capture_output=True, text=True,
                               timeout=300).stdout)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        return  # the browser check needs chromium; the comparison itself was checked above
    dom = subprocess.run([chromium, "--headless",
                          "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + page],
                         capture_output=True, text=True, timeout=120).stdout
    for plot in ("compare-pending", "compare-per-node", "compare-per-zone", "compare-differences"):
        if 'id="%s"' % plot not in dom:
            raise Fail("the browser shows no %s plot" % plot)


def check_forbidden_is_an_error(up):
    """A server that refuses the list (403, as kube-apiserver's RBAC answers) stops berth record
    at once with the kind and the reason."""
    import http.server
    import threading

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                               "reason": "Forbidden", "code": 403,
                               "message": "namespaces is forbidden: User \"x\" cannot list "
                                          "resource \"namespaces\""}).encode()
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        p = subprocess.run([up.berth, "record", "--master",
                            "http://127.0.0.1:%d" % server.server_address[1], "--kubeconfig",
                            up.kubeconfig, "-o", os.path.join(up.data_dir, "refused.jsonl")],
                           capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    if p.returncode != 1 or "forbidden" not in p.stderr or "Namespace" not in p.stderr:
        raise Fail("forbidden list: rc %d, %s" % (p.returncode, p.stderr.strip()))


CHECKS = [check_records_changes, check_replay_matches_simulate, check_duration_ends_it, check_unreachable_is_an_error,
          check_forbidden_is_an_error]

if __name__ == "__main__":
    run_against_up(CHECKS, "berth-record-e2e-")
