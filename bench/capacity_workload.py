#!/usr/bin/env python3
"""The `berth capacity` benchmark workload (docs/performance.md).

Writes OUT_DIR/cluster.json (NODES nodes of 4 CPU, 32Gi, 110 pods in 3 zones, and BOUND pods
of 250m / 1Gi bound round-robin) and OUT_DIR/template.json (a 100m / 500Mi pod), then:

  berth capacity -f OUT_DIR/template.json -f OUT_DIR/cluster.json --max 10000

Usage: capacity_workload.py OUT_DIR [NODES=5000] [BOUND=1000]
"""
import json
import os
import sys


def main():
    out = sys.argv[1]
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    bound = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    os.makedirs(out, exist_ok=True)
    items = []
    for i in range(nodes):
        alloc = {"cpu": "4", "memory": "32Gi", "pods": "110"}
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": "node-%d" % i,
                                   "labels": {"kubernetes.io/hostname": "node-%d" % i,
                                              "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}},
                      "status": {"capacity": alloc, "allocatable": alloc}})
    for i in range(bound):
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "bound-%d" % i, "namespace": "default",
                                   "uid": "bound-%d" % i, "labels": {"app": "bound"}},
                      "spec": {"nodeName": "node-%d" % (i % nodes),
                               "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                               "resources": {"requests": {"cpu": "250m",
                                                                          "memory": "1Gi"}}}]}})
    with open(os.path.join(out, "cluster.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    template = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                         "resources": {"requests": {"cpu": "100m",
                                                                    "memory": "500Mi"}}}]}}
    with open(os.path.join(out, "template.json"), "w") as f:
        json.dump(template, f)


if __name__ == "__main__":
    main()
