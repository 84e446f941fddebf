#!/usr/bin/env python3
"""End-to-end tests of `berth cluster` against `berth up --controllers= --no-kubelets` (an API
server and scheduler with no nodes, kubelets or controllers of its own), with the real kubectl.

Usage: run_cluster_e2e.py BERTH [CHECK ...]

* `berth cluster --nodes 3` with a shape (cpu, memory, pods, zones, labels) creates the nodes
  annotated berth.dev/simulated-kubelet; its kubelets make them Ready with that capacity;
* a node created by someone else without the annotation is left alone (no lease, not Ready);
* a ReplicaSet's pods are created by its controllers, bound by the scheduler and Running;
* `berth node stop` one of its nodes: its controllers taint it and replace its pods;
* `--terminated-pod-gc-threshold 1`: of two finished pods the older is collected.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for  # noqa: E402
from run_node_lifecycle_e2e import get, node_cmd, ready_status, replica_set, running  # noqa: E402

CLUSTER_ARGS = ["--nodes", "3", "--node-name-prefix", "sim", "--node-cpu", "4",
                "--node-memory", "16Gi", "--node-pods", "50", "--node-zones", "east,west",
                "--node-labels", "team=blue", "--node-monitor-grace-period", "2s",
                "--node-lease-renew-interval", "300ms", "--pod-start-delay", "100ms",
                "--cluster-cidr", "10.201.0.0/16", "--node-cidr-mask-size", "27",
                "--terminated-pod-gc-threshold", "1"]


class Cluster:
    def __init__(self, up):
        self.log = open(os.path.join(up.data_dir, "cluster.log"), "a")
        self.proc = subprocess.Popen([up.berth, "cluster", "--kubeconfig", up.kubeconfig]
                                     + CLUSTER_ARGS, stdout=self.log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        self.log.close()


def check_cluster_nodes_pods_and_lifecycle(up):
    # Someone else's node (a real kubelet's): not simulated.
    other = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "real-node"}}
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(other))
    cluster = Cluster(up)
    try:
        names = ["sim-001", "sim-002", "sim-003"]

        def ready():
            nodes = {n["metadata"]["name"]: n for n in get(up, "nodes")["items"]}
            return all(n in nodes and ready_status(nodes[n]) == "True" for n in names) and nodes
        nodes = wait_for("3 simulated nodes Ready", ready, timeout=60)
        n1 = nodes["sim-001"]
        if n1["status"]["capacity"]["cpu"] != "4" or n1["status"]["capacity"]["pods"] != "50" \
                or n1["status"]["capacity"]["memory"] != "16Gi":
            raise Fail("shape not applied: %r" % n1["status"]["capacity"])
        cidrs = wait_for("pod CIDRs from --cluster-cidr", lambda: (lambda c: all(c) and c)(
            [get(up, "nodes/" + n)["spec"].get("podCIDR") for n in names]), timeout=30)
        if sorted(cidrs) != ["10.201.0.0/27", "10.201.0.32/27", "10.201.0.64/27"]:
            raise Fail("pod CIDRs with --cluster-cidr 10.201.0.0/16 --node-cidr-mask-size 27: %r"
                       % cidrs)
        zones = [nodes[n]["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in names]
        if zones != ["east", "west", "east"] or n1["metadata"]["labels"].get("team") != "blue":
            raise Fail("zones/labels: %r %r" % (zones, n1["metadata"]["labels"]))
        if ready_status(nodes["real-node"]) == "True":
            raise Fail("the node without the annotation was simulated")
        up.kubectl(["apply", "-f", "-"], stdin=json.dumps(replica_set("web", 4, 2)))
        pods = wait_for("4 pods running", lambda: len(running(up, "web")) == 4
                        and running(up, "web"), timeout=60)
        victim = pods[0]["spec"]["nodeName"]
        node_cmd(up, "stop", victim)
        wait_for("replacements elsewhere",
                 lambda: len(running(up, "web")) == 4
                 and all(p["spec"]["nodeName"] != victim for p in running(up, "web")),
                 timeout=60)
        node_cmd(up, "start", victim)
        wait_for("node Ready again", lambda: ready_status(get(up, "node", victim)) == "True",
                 timeout=30)
        # --terminated-pod-gc-threshold 1: of two finished pods the older is collected.
        for i in range(2):
            done = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "done-%d" % i, "namespace": "default",
                                 "annotations": {"berth.dev/run-seconds": "0.1"}},
                    "spec": {"restartPolicy": "Never",
                             "containers": [{"name": "c", "image": "nginx"}]}}
            up.kubectl(["create", "-f", "-"], stdin=json.dumps(done))
            time.sleep(1.1)  # creation times a second apart: done-0 is the older

        def finished():
            return {p["metadata"]["name"] for p in get(up, "pods")["items"]
                    if p["metadata"]["name"].startswith("done-")}
        wait_for("the older finished pod collected", lambda: finished() == {"done-1"},
                 timeout=60)
    finally:
        cluster.stop()


CHECKS = [check_cluster_nodes_pods_and_lifecycle]


def main():
    run_against_up(CHECKS, "berth-cluster-e2e-", demo_nodes=0,
                   extra=["--controllers=", "--no-kubelets"])  # as docs/cluster.md writes it


if __name__ == "__main__":
    main()
