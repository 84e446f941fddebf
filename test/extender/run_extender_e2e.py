#!/usr/bin/env python3
"""End-to-end tests of scheduler extenders with the berth binary.

Usage: run_extender_e2e.py BERTH [MINIMAL_EXTENDER]

  * simulate_python: an extender written with Python's standard library (python_extender.py),
    unchanged, filters and prioritizes in `berth simulate`, with nodeCacheCapable true and false.
  * up_python: the same extender with `berth up` (the scheduler through the embedded API server):
    a labelled pod binds where the extender says; a pod it rejects everywhere gets a
    FailedScheduling event naming the extender's reason.
  * up_sdk_extender_and_ignorable: `berth extender label-rule` (the C++ SDK example) as a
    separate process, plus an unreachable ignorable extender that must not block scheduling.
  * minimal_sdk_example: the complete example of docs/extenders.md, in `berth simulate`.
Prints one line per check and "N passed, M failed"; exits non-zero on failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "up"))
from run_up_e2e import Fail, Up, create, free_port, pod_manifest, wait_for  # noqa: E402


def start_python_extender(allowed):
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "python_extender.py"), allowed],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise Fail("python extender did not start: %r" % line)
    return proc, int(line.split()[1])


def calls(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5) as r:
        return json.loads(r.read())


def config(path, extenders):
    lines = ["apiVersion: kubescheduler.config.k8s.io/v1",
             "kind: KubeSchedulerConfiguration",
             "leaderElection:", "  leaderElect: false", "extenders:"]
    for e in extenders:
        first = True
        for k, v in e.items():
            lines.append(("- " if first else "  ") + "%s: %s" % (k, json.dumps(v)))
            first = False
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def check_simulate_python(berth, tmp):
    proc, port = start_python_extender("node-a")
    try:
        manifests = os.path.join(tmp, "cluster.json")
        with open(manifests, "w") as f:
            for o in [node("node-a"), node("node-b"), node("node-c"),
                      pod_manifest("wanted", labels={"want": "you"}),
                      pod_manifest("free")]:
                f.write(json.dumps(o) + "\n")
        for cache in (False, True):
            cfg = config(os.path.join(tmp, "sim-%s.yaml" % cache), [{
                "urlPrefix": "http://127.0.0.1:%d/scheduler" % port, "filterVerb": "filter",
                "prioritizeVerb": "prioritize", "weight": 100, "nodeCacheCapable": cache}])
            out = subprocess.run([berth, "simulate", "--config", cfg, "-f", manifests, "-o",
                                  "json"], capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise Fail("simulate failed: " + out.stderr)
            pods = {p["pod"]: p for p in json.loads(out.stdout)["results"]}
            if pods["default/wanted"].get("node") != "node-a":
                raise Fail("wanted went to %r, not node-a" % pods["default/wanted"].get("node"))
            # Prioritize ranks by name: node-c scores 2 x 100 x 10 on top of the plugins.
            if pods["default/free"].get("node") != "node-c":
                raise Fail("free went to %r, not node-c" % pods["default/free"].get("node"))
            score = pods["default/free"]["score"]
            url = "http://127.0.0.1:%d/scheduler" % port
            if score["node-c"]["extenders"].get(url) != 2000:
                raise Fail("extender contribution missing: %r" % score["node-c"])
        c = calls(port)
        if c["filter"] < 4 or c["prioritize"] < 2:
            raise Fail("extender calls %r" % c)
    finally:
        proc.kill()


def pod_of(up, name):
    return json.loads(up.kubectl(["get", "pod", name, "-o", "json"])[1])


def events_for(up, name):
    out = up.kubectl(["get", "events", "--field-selector", "involvedObject.name=" + name,
                      "-o", "json"])[1]
    return [e.get("message", "") for e in json.loads(out)["items"]]


def check_up_python(berth, tmp):
    proc, port = start_python_extender("demo-node-002")
    up = None
    data = os.path.join(tmp, "up-python")
    os.makedirs(data)
    try:
        cfg = config(os.path.join(tmp, "up-python.yaml"), [{
            "urlPrefix": "http://127.0.0.1:%d" % port, "filterVerb": "filter",
            "prioritizeVerb": "prioritize", "weight": 1, "nodeCacheCapable": True}])
        up = Up(berth, data, demo_nodes=3, extra=["--config", cfg])
        create(up, [pod_manifest("wanted", labels={"want": "you"})])
        wait_for("wanted bound", lambda: pod_of(up, "wanted")["spec"].get("nodeName"))
        if pod_of(up, "wanted")["spec"]["nodeName"] != "demo-node-002":
            raise Fail("wanted bound to %s" % pod_of(up, "wanted")["spec"]["nodeName"])
        # demo-node-002 has 7800m allocatable: only one of these fits there, and the extender
        # rejects every other node for the second one.
        create(up, [pod_manifest("too-big", cpu="5", labels={"want": "you"}),
                    pod_manifest("also-big", cpu="5", labels={"want": "you"})])
        wait_for("one big pod bound", lambda: any(
            pod_of(up, n)["spec"].get("nodeName") for n in ("too-big", "also-big")))
        pending = [n for n in ("too-big", "also-big") if not pod_of(up, n)["spec"].get("nodeName")]
        if len(pending) != 1:
            raise Fail("expected one pending big pod, got %r" % pending)
        msgs = wait_for("FailedScheduling naming the extender", lambda: [
            m for m in events_for(up, pending[0]) if "only demo-node-002 takes want=you pods" in m])
        if "0/3 nodes are available" not in msgs[0]:
            raise Fail("unexpected message %r" % msgs[0])
    finally:
        if up:
            up.stop()
        proc.kill()


def check_up_sdk_extender_and_ignorable(berth, tmp):
    ext_port = free_port()
    log = open(os.path.join(tmp, "sdk-extender.log"), "w")
    ext = subprocess.Popen([berth, "extender", "label-rule", "--port", str(ext_port),
                            "--label", "team=blue", "--nodes", "demo-node-003"],
                           stdout=log, stderr=subprocess.STDOUT)
    up = None
    data = os.path.join(tmp, "up-sdk")
    os.makedirs(data)
    try:
        def healthy():
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % ext_port,
                                            timeout=2) as r:
                    return r.read() == b"ok"
            except OSError:
                return False
        wait_for("SDK extender healthy", healthy, timeout=20)
        cfg = config(os.path.join(tmp, "up-sdk.yaml"), [
            {"urlPrefix": "http://127.0.0.1:%d" % free_port(), "filterVerb": "filter",
             "ignorable": True, "httpTimeout": "1s"},
            {"urlPrefix": "http://127.0.0.1:%d" % ext_port, "filterVerb": "filter",
             "prioritizeVerb": "prioritize", "weight": 5}])
        up = Up(berth, data, demo_nodes=3, extra=["--config", cfg])
        create(up, [pod_manifest("blue-%d" % i, labels={"team": "blue"}) for i in range(3)] +
               [pod_manifest("red")])
        for i in range(3):
            wait_for("blue-%d bound" % i,
                     lambda i=i: pod_of(up, "blue-%d" % i)["spec"].get("nodeName"))
            if pod_of(up, "blue-%d" % i)["spec"]["nodeName"] != "demo-node-003":
                raise Fail("blue-%d not on demo-node-003" % i)
        wait_for("red bound", lambda: pod_of(up, "red")["spec"].get("nodeName"))
        if "Skipping extender as it returned error and has ignorable flag set" not in up.tail():
            raise Fail("the skipped ignorable extender is not logged")
    finally:
        if up:
            up.stop()
        ext.terminate()
        try:
            ext.wait(timeout=10)
        except subprocess.TimeoutExpired:
            ext.kill()
            raise Fail("berth extender did not stop on SIGTERM")
        log.close()


def check_minimal_sdk_example(berth, tmp):
    if len(sys.argv) < 3:
        raise Fail("no minimal_extender binary given")
    port = free_port()
    log = open(os.path.join(tmp, "minimal.log"), "w")
    ext = subprocess.Popen([sys.argv[2], str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        def healthy():
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=2) as r:
                    return r.read() == b"ok"
            except OSError:
                return False
        wait_for("minimal extender healthy", healthy, timeout=20)
        ssd_small, ssd_big, hdd = node("ssd-small"), node("ssd-big"), node("hdd")
        ssd_small["metadata"]["labels"]["disktype"] = "ssd"
        ssd_big["metadata"]["labels"]["disktype"] = "ssd"
        ssd_big["status"]["allocatable"]["cpu"] = "8"
        hdd["status"]["allocatable"]["cpu"] = "16"
        manifests = os.path.join(tmp, "cluster.json")
        with open(manifests, "w") as f:
            for o in [ssd_small, ssd_big, hdd, pod_manifest("p")]:
                f.write(json.dumps(o) + "\n")
        cfg = config(os.path.join(tmp, "cfg.yaml"), [{
            "urlPrefix": "http://127.0.0.1:%d" % port, "filterVerb": "filter",
            "prioritizeVerb": "prioritize", "weight": 10}])
        out = subprocess.run([berth, "simulate", "--config", cfg, "-f", manifests, "-o", "json"],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise Fail("simulate failed: " + out.stderr)
        r = json.loads(out.stdout)["results"][0]
        if r.get("node") != "ssd-big":
            raise Fail("p went to %r, not ssd-big" % r.get("node"))
        if r["filter"]["hdd"]["reasons"] != ["node(s) without an SSD"]:
            raise Fail("hdd not rejected by the extender: %r" % r["filter"])
    finally:
        ext.terminate()
        ext.wait(timeout=10)
        log.close()


CHECKS = [check_simulate_python, check_up_python, check_up_sdk_extender_and_ignorable,
          check_minimal_sdk_example]


def main():
    berth = os.path.abspath(sys.argv[1])
    passed = failed = 0
    for check in CHECKS:
        tmp = tempfile.mkdtemp(prefix="berth-ext-e2e-")
        t = time.time()
        try:
            check(berth, tmp)
            passed += 1
            print("PASS %s (%.1fs)" % (check.__name__, time.time() - t), flush=True)
        except (Fail, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
            failed += 1
            print("FAIL %s: %s" % (check.__name__, e), flush=True)
            for root, _, files in os.walk(tmp):
                for f in files:
                    if f.endswith(".log"):
                        print("--- %s:\n%s" % (f, open(os.path.join(root, f)).read()[-3000:]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
