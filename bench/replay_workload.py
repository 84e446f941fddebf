#!/usr/bin/env python3
"""Writes a synthetic recording (kube-scheduler-simulator's recorder format, as `berth record`
writes it) for `berth compare --replay`: NODES nodes over 3 zones, then POD_EVENTS pod events
over an hour of recorded time — pods created by workloads of 50 equal replicas (60%), updates
carrying the recorded scheduler's binding and a status (20%), deletions of earlier pods (20%).

Usage: replay_workload.py OUT.jsonl [--nodes 10000] [--pod-events 100000] [--seed 1]
"""
import argparse
import datetime
import json
import random


def stamp(t0, seconds):
    t = t0 + datetime.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--pod-events", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t0 = datetime.datetime(2026, 11, 1, 12, 0, 0)
    w = open(a.out, "w")

    def line(t, event, resource):
        w.write(json.dumps({"time": stamp(t0, t), "event": event, "resource": resource},
                           separators=(",", ":")) + "\n")

    line(0, "Add", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    for i in range(a.nodes):
        big = i % 4 == 0
        line(0.001 * i / a.nodes, "Add", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "labels": {
                "kubernetes.io/hostname": f"node-{i:05d}",
                "topology.kubernetes.io/zone": f"zone-{'abc'[i % 3]}"}},
            "status": {"allocatable": {"cpu": "16" if big else "8",
                                        "memory": "64Gi" if big else "32Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
    live = []
    workload = None
    left = 0
    created = 0
    for k in range(a.pod_events):
        t = 1 + 3600.0 * k / a.pod_events
        r = rng.random()
        if live and r < 0.2:
            name = live.pop(rng.randrange(len(live)))
            line(t, "Delete", {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": name, "namespace": "default"}})
            continue
        if live and r < 0.4:
            name = live[rng.randrange(len(live))]
            line(t, "Update", {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": name, "namespace": "default",
                                            "labels": {"app": name.rsplit("-", 1)[0]}},
                               "spec": {"nodeName": f"node-{rng.randrange(a.nodes):05d}",
                                        "containers": [{"name": "c", "image": "pause"}]},
                               "status": {"phase": "Running"}})
            continue
        if left == 0:
            workload = {"name": f"w{created}", "cpu": rng.choice(["100m", "250m", "500m", "1"]),
                        "memory": rng.choice(["128Mi", "512Mi", "1Gi", "2Gi"])}
            left = 50
        left -= 1
        name = f"{workload['name']}-{created}"
        created += 1
        live.append(name)
        line(t, "Add", {"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": "default",
                                     "labels": {"app": workload["name"]},
                                     "creationTimestamp": stamp(t0, t)[:19] + "Z"},
                        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {
                            "requests": {"cpu": workload["cpu"], "memory": workload["memory"]}}}]},
                        "status": {"phase": "Pending"}})
    w.close()


if __name__ == "__main__":
    main()
