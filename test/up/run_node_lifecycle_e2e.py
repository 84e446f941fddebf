#!/usr/bin/env python3
"""End-to-end tests of node lifecycle in `berth up`, with the real kubectl.

Usage: run_node_lifecycle_e2e.py BERTH [CHECK ...]

* `berth node stop` a node running pods of a ReplicaSet: after --node-monitor-grace-period it
  is Ready Unknown with the node.kubernetes.io/unreachable NoExecute and NoSchedule taints; its
  pods (tolerating unreachable for 2 s) are deleted and the ReplicaSet's replacements run on
  other nodes; `berth node start` makes it Ready and untainted again;
* a pod without the API server's default toleration of 300 s (one tolerating for ever) stays;
* `berth up --port 0` on a new data directory creates the 8 demo nodes and keeps its port on a
  restart;
* the pod garbage collector (`--terminated-pod-gc-threshold 2`): of four finished pods the two
  oldest go; a pod bound to a node deleted with kubectl goes 40 s (the quarantine) to a minute
  later, and the namespace it held Terminating with it; a pod deleted before it was scheduled, held by a finalizer, is marked Failed and
  force-deleted.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import KUBECTL, Fail, run_against_up, wait_for  # noqa: E402

UNREACHABLE = "node.kubernetes.io/unreachable"


def get(up, kind, name=None, ns="default"):
    args = ["get", kind] + ([name] if name else []) + ["-n", ns, "-o", "json"]
    return json.loads(up.kubectl(args)[1])


def ready_status(node):
    for c in node.get("status", {}).get("conditions", []):
        if c["type"] == "Ready":
            return c["status"]
    return ""


def taints(node):
    return {(t["key"], t["effect"]) for t in node.get("spec", {}).get("taints", []) or []}


def node_cmd(up, verb, name):
    p = subprocess.run([up.berth, "node", verb, name, "--data-dir", up.data_dir],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise Fail("berth node %s %s: %s" % (verb, name, p.stderr))


def replica_set(name, replicas, toleration_seconds):
    tolerations = [{"key": k, "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": toleration_seconds}
                   for k in (UNREACHABLE, "node.kubernetes.io/not-ready")]
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"tolerations": tolerations,
                                           "containers": [{"name": "c", "image": "nginx",
                                                           "resources": {"requests": {
                                                               "cpu": "100m"}}}]}}}}


def running(up, app):
    pods = get(up, "pods")["items"]
    return [p for p in pods if p["metadata"].get("labels", {}).get("app") == app
            and not p["metadata"].get("deletionTimestamp")
            and p.get("status", {}).get("phase") == "Running"]


def check_stopped_node_is_tainted_and_its_pods_replaced(up):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(replica_set("web", 6, 2)))
    # A pod tolerating unreachable for ever stays on the stopped node.
    first = wait_for("6 web pods running", lambda: len(running(up, "web")) == 6 and running(up, "web"))
    victim = first[0]["spec"]["nodeName"]
    keeper = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "keeper", "namespace": "default"},
              "spec": {"nodeName": victim,
                       "tolerations": [{"key": UNREACHABLE, "operator": "Exists",
                                        "effect": "NoExecute"}],
                       "containers": [{"name": "c", "image": "nginx"}]}}
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(keeper))
    wait_for("keeper running",
             lambda: get(up, "pods", "keeper").get("status", {}).get("phase") == "Running")
    on_victim = {p["metadata"]["name"] for p in first if p["spec"]["nodeName"] == victim}
    node_cmd(up, "stop", victim)
    stopped_at = time.time()
    wait_for("node Unknown", lambda: ready_status(get(up, "node", victim)) == "Unknown", timeout=30)
    if time.time() - stopped_at < 1.5:
        raise Fail("node went Unknown before the 2 s grace period")
    wait_for("unreachable taints",
             lambda: {(UNREACHABLE, "NoExecute"), (UNREACHABLE, "NoSchedule")}
             <= taints(get(up, "node", victim)), timeout=30)

    def replaced():
        pods = running(up, "web")
        names = {p["metadata"]["name"] for p in pods}
        return (len(pods) == 6 and not (names & on_victim)
                and all(p["spec"]["nodeName"] != victim for p in pods))
    wait_for("replacements running elsewhere", replaced, timeout=60)
    keep = get(up, "pods", "keeper")
    if keep["metadata"].get("deletionTimestamp"):
        raise Fail("the pod tolerating unreachable for ever was evicted")
    node_cmd(up, "start", victim)
    wait_for("node Ready again", lambda: ready_status(get(up, "node", victim)) == "True",
             timeout=30)
    wait_for("taints removed", lambda: not {t for t in taints(get(up, "node", victim))
                                            if t[0] == UNREACHABLE}, timeout=30)
    # The evicted pods, Terminating while their node was down, finish deleting.
    wait_for("evicted pods gone", lambda: not on_victim & {
        p["metadata"]["name"] for p in get(up, "pods")["items"]}, timeout=30)


def check_default_tolerations_are_added(up):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(pod))
    tols = get(up, "pods", "plain")["spec"].get("tolerations", [])
    for key in (UNREACHABLE, "node.kubernetes.io/not-ready"):
        if not any(t.get("key") == key and t.get("tolerationSeconds") == 300 for t in tols):
            raise Fail("no default toleration of %s: %r" % (key, tols))


def check_pod_gc(up):
    def pod(name, **spec):
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": dict({"containers": [{"name": "c", "image": "nginx"}]}, **spec)}
        return body
    # Finished pods: run for 0.1 s and exit 0.
    for i in range(4):
        done = pod("done-%d" % i, restartPolicy="Never")
        done["metadata"]["annotations"] = {"berth.dev/run-seconds": "0.1"}
        up.kubectl(["create", "-f", "-"], stdin=json.dumps(done))
    # An orphan: bound to a node that is then deleted, in a namespace deleted after it.
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gc-node"}}
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(node))
    up.kubectl(["create", "namespace", "gc-ns"])
    orphan = pod("orphan", nodeName="gc-node")
    orphan["metadata"]["namespace"] = "gc-ns"
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(orphan))
    wait_for("orphan running", lambda: get(up, "pods", "orphan", ns="gc-ns")
             .get("status", {}).get("phase") == "Running")
    # Deleted while unscheduled (no such scheduler), kept by a finalizer: Terminating on no node.
    stuck = pod("stuck", schedulerName="no-such-scheduler")
    stuck["metadata"]["finalizers"] = ["example.com/hold"]
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(stuck))
    up.kubectl(["delete", "pod", "stuck", "--wait=false"])
    deleted_at = time.time()
    up.kubectl(["delete", "node", "gc-node"])
    # Its pod has no kubelet left to confirm a graceful deletion: the namespace waits for it.
    up.kubectl(["delete", "namespace", "gc-ns", "--wait=false"])

    def names():
        return {p["metadata"]["name"] for p in get(up, "pods")["items"]}
    wait_for("the two oldest finished pods collected",
             lambda: {"done-2", "done-3"} <= names() and not {"done-0", "done-1"} & names(),
             timeout=60)
    wait_for("the unscheduled terminating pod marked Failed",
             lambda: get(up, "pods", "stuck").get("status", {}).get("phase") == "Failed",
             timeout=40)
    up.kubectl(["patch", "pod", "stuck", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'])
    namespace = json.loads(up.kubectl(["get", "namespace", "gc-ns", "-o", "json"])[1])
    if namespace.get("status", {}).get("phase") != "Terminating":
        raise Fail("namespace gc-ns is not held Terminating by the orphan")

    def namespace_gone():
        return up.kubectl(["get", "namespace", "gc-ns", "--ignore-not-found", "-o", "name"],
                          check=False)[1].strip() == ""
    wait_for("orphan and its namespace gone", namespace_gone, timeout=100)
    elapsed = time.time() - deleted_at
    if elapsed < 39:
        raise Fail("the orphan went %.1f s after its node, before the 40 s quarantine" % elapsed)
    wait_for("stuck gone", lambda: "stuck" not in names(), timeout=30)


def check_port_zero_is_kept_and_demo_nodes_default(up):
    data_dir = tempfile.mkdtemp(prefix="berth-port0-")
    try:
        ports = []
        for _ in range(2):
            log = open(os.path.join(data_dir, "up.log"), "a")
            proc = subprocess.Popen([up.berth, "up", "--data-dir", data_dir, "--port", "0",
                                     "--no-scheduler"], stdout=log, stderr=subprocess.STDOUT)
            try:
                port_file = os.path.join(data_dir, "port")
                kubeconfig = os.path.join(data_dir, "kubeconfig")

                def serving():
                    if not os.path.exists(port_file) or not os.path.exists(kubeconfig):
                        return False
                    p = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "get", "nodes",
                                        "-o", "name"], capture_output=True, text=True)
                    return p.returncode == 0 and p.stdout.split()
                nodes = wait_for("berth up --port 0 serving", serving)
                if len(nodes) != 8:
                    raise Fail("want the 8 default demo nodes, got %r" % nodes)
                ports.append(open(port_file).read().strip())
            finally:
                proc.terminate()
                proc.wait(timeout=30)
                log.close()
        if ports[0] != ports[1] or ports[0] == "0":
            raise Fail("port not kept across restarts: %r" % ports)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


CHECKS = [check_pod_gc,
          check_default_tolerations_are_added,
          check_stopped_node_is_tainted_and_its_pods_replaced,
          check_port_zero_is_kept_and_demo_nodes_default]


def main():
    run_against_up(CHECKS, "berth-nodes-e2e-", demo_nodes=3,
                   extra=["--node-monitor-grace-period", "2s",
                          "--node-lease-renew-interval", "300ms",
                          "--pod-start-delay", "100ms",
                          "--terminated-pod-gc-threshold", "2"])


if __name__ == "__main__":
    main()
