#!/usr/bin/env python3
"""End-to-end tests of the DaemonSet and StatefulSet controllers of `berth up`, with the real
kubectl.

Usage: run_daemonset_statefulset_e2e.py BERTH [CHECK ...]

* a DaemonSet runs one pod per node, each pinned by a `matchFields metadata.name` affinity,
  bound by the scheduler and carrying the daemon tolerations; a node added with kubectl gets
  its pod; a NoExecute taint removes the node's pod, a NoSchedule taint keeps it (counted
  misscheduled); a nodeSelector leaves unlabelled nodes out; a deleted node's pod goes;
* a DaemonSet rolling update replaces every pod (`kubectl rollout status`), and
  `kubectl rollout history` lists two revisions;
* a StatefulSet creates web-0, web-1, web-2 in order (each created only after the previous
  one is Ready), with hostname, subdomain and the pod-name / pod-index labels; scales down by
  the highest ordinal; a rolling update replaces every pod, highest ordinal first, and
  `kubectl rollout status` waits for it; a partition keeps the pods below it;
* a Parallel StatefulSet with volumeClaimTemplates (a StorageClass that does not exist)
  creates claims <template>-<set>-<i> with the selector's labels, unowned by default and owned
  by the set with whenDeleted: Delete, and pods whose volumes name them;
* after `berth up` is killed (SIGKILL) and restarted on the same data, the StatefulSet's pods
  are the same objects (same UIDs) and no ordinal has a second pod.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, Up, run_against_up, wait_for  # noqa: E402

NODES = 3


def apply(up, obj):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))


def get(up, kind, name, ns="default"):
    args = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
    rc, out, _ = up.kubectl(args, check=False)
    return json.loads(out) if rc == 0 else None


def pods(up, selector):
    _, out, _ = up.kubectl(["get", "pods", "-n", "default", "-l", selector, "-o", "json"])
    return json.loads(out)["items"]


def live(items):
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def ready(p):
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in p.get("status", {}).get("conditions", []))


def target_node(p):
    terms = p["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    if len(terms) != 1 or terms[0]["matchFields"][0]["key"] != "metadata.name":
        raise Fail("daemon pod affinity: %s" % terms)
    return terms[0]["matchFields"][0]["values"][0]


def daemon_set(name, image="nginx:1", node_selector=None):
    spec = {"containers": [{"name": "c", "image": image}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"ds": name}},
                     "template": {"metadata": {"labels": {"ds": name}}, "spec": spec}}}


def node_names(up):
    _, out, _ = up.kubectl(["get", "nodes", "-o", "json"])
    return sorted(n["metadata"]["name"] for n in json.loads(out)["items"])


def ds_settled(up, name, desired):
    """The DaemonSet's status once desired pods are ready and updated (else None)."""
    ds = get(up, "daemonset", name)
    st = (ds or {}).get("status", {})
    if st.get("desiredNumberScheduled") == desired and st.get("numberReady") == desired and \
            st.get("updatedNumberScheduled") == desired and \
            st.get("observedGeneration") == ds["metadata"]["generation"]:
        return st
    return None


def check_daemonset_follows_nodes(up):
    nodes = node_names(up)
    apply(up, daemon_set("agent"))
    wait_for("agent ready on every node", lambda: ds_settled(up, "agent", len(nodes)))
    got = live(pods(up, "ds=agent"))
    placed = sorted(p["spec"].get("nodeName") for p in got)
    if placed != nodes or sorted(target_node(p) for p in got) != nodes:
        raise Fail("daemon pods on %s, want one on each of %s" % (placed, nodes))
    keys = {(t.get("key"), t.get("effect")) for t in got[0]["spec"].get("tolerations", [])}
    for want in [("node.kubernetes.io/not-ready", "NoExecute"),
                 ("node.kubernetes.io/unreachable", "NoExecute"),
                 ("node.kubernetes.io/unschedulable", "NoSchedule"),
                 ("node.kubernetes.io/disk-pressure", "NoSchedule")]:
        if want not in keys:
            raise Fail("daemon pod lacks toleration %s: %s" % (want, keys))
    # A node added with kubectl gets a pod.
    apply(up, {"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": "extra", "labels": {"kubernetes.io/hostname": "extra"}},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                          "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    wait_for("a pod bound to the new node", lambda: [
        p for p in live(pods(up, "ds=agent")) if p["spec"].get("nodeName") == "extra"])
    # NoExecute: the pod goes and the node is no longer desired.
    up.kubectl(["taint", "node", "extra", "evict=yes:NoExecute"])
    wait_for("the tainted node's pod removed", lambda: not [
        p for p in pods(up, "ds=agent") if target_node(p) == "extra"])
    wait_for("desired back to %d" % len(nodes), lambda: ds_settled(up, "agent", len(nodes)))
    # NoSchedule: the running pod stays, counted misscheduled.
    up.kubectl(["taint", "node", nodes[0], "hold=yes:NoSchedule"])
    st = wait_for("NoSchedule counted misscheduled", lambda: (
        lambda s: s if s.get("numberMisscheduled") == 1 and
        s.get("desiredNumberScheduled") == len(nodes) - 1 else None)(
        get(up, "daemonset", "agent").get("status", {})))
    if not [p for p in live(pods(up, "ds=agent")) if p["spec"].get("nodeName") == nodes[0]]:
        raise Fail("NoSchedule taint removed the running pod: %s" % st)
    up.kubectl(["taint", "node", nodes[0], "hold=yes:NoSchedule-"])
    up.kubectl(["delete", "node", "extra"])
    # A nodeSelector: only the labelled node.
    up.kubectl(["label", "node", nodes[1], "role=edge"])
    apply(up, daemon_set("edge", node_selector={"role": "edge"}))
    wait_for("edge on the labelled node only", lambda: ds_settled(up, "edge", 1))
    got = [p["spec"].get("nodeName") for p in live(pods(up, "ds=edge"))]
    if got != [nodes[1]]:
        raise Fail("edge pods on %s, want [%s]" % (got, nodes[1]))
    up.kubectl(["label", "node", nodes[2], "role=edge"])
    wait_for("edge follows the new label", lambda: ds_settled(up, "edge", 2))
    up.kubectl(["label", "node", nodes[1], "role-"])
    wait_for("edge leaves the unlabelled node", lambda: sorted(
        target_node(p) for p in pods(up, "ds=edge")) == [nodes[2]] or None)


def check_daemonset_rolling_update(up):
    nodes = node_names(up)
    apply(up, daemon_set("roll"))
    wait_for("roll ready", lambda: ds_settled(up, "roll", len(nodes)))
    old = {p["metadata"]["name"] for p in pods(up, "ds=roll")}
    apply(up, daemon_set("roll", image="nginx:2"))
    up.kubectl(["rollout", "status", "daemonset/roll", "--timeout=60s"], timeout=90)
    got = live(pods(up, "ds=roll"))
    if len(got) != len(nodes) or {p["metadata"]["name"] for p in got} & old or \
            {p["spec"]["containers"][0]["image"] for p in got} != {"nginx:2"}:
        raise Fail("after the rollout: %s" % [(p["metadata"]["name"],
                                               p["spec"]["containers"][0]["image"]) for p in got])
    _, out, _ = up.kubectl(["rollout", "history", "daemonset/roll"])
    revs = [line.split()[0] for line in out.splitlines()[2:] if line.strip()]
    if revs != ["1", "2"]:
        raise Fail("rollout history: %r" % out)


def stateful_set(name, replicas, image="nginx:1", extra_spec=None):
    spec = {"replicas": replicas, "serviceName": name + "-svc",
            "selector": {"matchLabels": {"sts": name}},
            "template": {"metadata": {"labels": {"sts": name}},
                         "spec": {"containers": [{"name": "c", "image": image}]}}}
    spec.update(extra_spec or {})
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def by_name(items):
    return {p["metadata"]["name"]: p for p in items}


def check_statefulset_ordered_scale(up):
    apply(up, stateful_set("web", 3))
    # OrderedReady: whenever web-i exists, every lower ordinal is Ready.
    deadline = time.time() + 60
    while time.time() < deadline:
        got = by_name(pods(up, "sts=web"))
        for i in range(1, 3):
            if "web-%d" % i in got:
                lower = got.get("web-%d" % (i - 1))
                created = got["web-%d" % i]["metadata"]["creationTimestamp"]
                if not lower or (not ready(lower) and
                                 lower["metadata"]["creationTimestamp"] > created):
                    raise Fail("web-%d exists before web-%d is ready" % (i, i - 1))
        if len(got) == 3 and all(ready(p) for p in got.values()):
            break
        time.sleep(0.1)
    got = by_name(pods(up, "sts=web"))
    if sorted(got) != ["web-0", "web-1", "web-2"]:
        raise Fail("pods: %s" % sorted(got))
    p = got["web-1"]
    labels = p["metadata"]["labels"]
    if p["spec"].get("hostname") != "web-1" or p["spec"].get("subdomain") != "web-svc" or \
            labels.get("statefulset.kubernetes.io/pod-name") != "web-1" or \
            labels.get("apps.kubernetes.io/pod-index") != "1":
        raise Fail("web-1: hostname %s subdomain %s labels %s" % (
            p["spec"].get("hostname"), p["spec"].get("subdomain"), labels))
    up.kubectl(["rollout", "status", "statefulset/web", "--timeout=60s"], timeout=90)
    up.kubectl(["scale", "statefulset/web", "--replicas=1"])
    wait_for("scaled down to web-0", lambda: sorted(
        p["metadata"]["name"] for p in pods(up, "sts=web")) == ["web-0"] or None)
    st = wait_for("status replicas 1", lambda: (
        lambda s: s if s.get("replicas") == 1 and s.get("readyReplicas") == 1 else None)(
        get(up, "statefulset", "web")["status"]))
    up.kubectl(["scale", "statefulset/web", "--replicas=3"])
    up.kubectl(["rollout", "status", "statefulset/web", "--timeout=60s"], timeout=90)
    if sorted(p["metadata"]["name"] for p in pods(up, "sts=web")) != ["web-0", "web-1", "web-2"]:
        raise Fail("scale up again: %s" % st)


def check_statefulset_rolling_update(up):
    apply(up, stateful_set("roll", 3))
    up.kubectl(["rollout", "status", "statefulset/roll", "--timeout=60s"], timeout=90)
    before = get(up, "statefulset", "roll")["status"]
    apply(up, stateful_set("roll", 3, image="nginx:2"))
    up.kubectl(["rollout", "status", "statefulset/roll", "--timeout=90s"], timeout=120)
    st = get(up, "statefulset", "roll")["status"]
    if st.get("currentRevision") != st.get("updateRevision") or \
            st.get("updateRevision") == before.get("updateRevision") or \
            st.get("updatedReplicas") != 3:
        raise Fail("status after the rollout: %s (before %s)" % (st, before))
    got = pods(up, "sts=roll")
    revs = {p["metadata"]["labels"].get("controller-revision-hash") for p in got}
    if revs != {st["updateRevision"]} or \
            {p["spec"]["containers"][0]["image"] for p in got} != {"nginx:2"}:
        raise Fail("pods after the rollout: %s" % revs)
    # A partition of 2: only roll-2 takes the next template.
    apply(up, stateful_set("roll", 3, image="nginx:3", extra_spec={
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}))
    up.kubectl(["rollout", "status", "statefulset/roll", "--timeout=90s"], timeout=120)
    images = {n: p["spec"]["containers"][0]["image"] for n, p in by_name(
        pods(up, "sts=roll")).items()}
    if images != {"roll-0": "nginx:2", "roll-1": "nginx:2", "roll-2": "nginx:3"}:
        raise Fail("with partition 2: %s" % images)


def check_statefulset_claims(up):
    templates = [{"metadata": {"name": "data", "labels": {"tier": "db"}},
                  "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "absent",
                           "resources": {"requests": {"storage": "1Gi"}}}}]
    apply(up, stateful_set("db", 2, extra_spec={"podManagementPolicy": "Parallel",
                                                "volumeClaimTemplates": templates}))
    apply(up, stateful_set("kept", 1, extra_spec={
        "volumeClaimTemplates": templates,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}))
    for i in range(2):
        claim = wait_for("claim data-db-%d" % i, lambda: get(up, "pvc", "data-db-%d" % i))
        labels = claim["metadata"].get("labels", {})
        if labels.get("sts") != "db" or labels.get("tier") != "db" or \
                claim["metadata"].get("ownerReferences") or \
                claim["spec"].get("storageClassName") != "absent":
            raise Fail("claim data-db-%d: %s" % (i, claim["metadata"]))
        p = wait_for("pod db-%d" % i, lambda: get(up, "pod", "db-%d" % i))
        vols = {v["name"]: v.get("persistentVolumeClaim", {}).get("claimName")
                for v in p["spec"].get("volumes", [])}
        if vols.get("data") != "data-db-%d" % i:
            raise Fail("pod db-%d volumes: %s" % (i, vols))
    claim = wait_for("claim data-kept-0", lambda: get(up, "pvc", "data-kept-0"))
    sts = get(up, "statefulset", "kept")
    refs = claim["metadata"].get("ownerReferences", [])
    if [(r["kind"], r["uid"]) for r in refs] != [("StatefulSet", sts["metadata"]["uid"])]:
        raise Fail("whenDeleted Delete: claim owners %s" % refs)


def check_statefulset_survives_kill(up):
    apply(up, stateful_set("keep", 3))
    up.kubectl(["rollout", "status", "statefulset/keep", "--timeout=60s"], timeout=90)
    uids = {n: p["metadata"]["uid"] for n, p in by_name(pods(up, "sts=keep")).items()}
    up.stop(sig=9)
    again = Up(up.berth, up.data_dir, demo_nodes=NODES)
    try:
        again.kubectl(["rollout", "status", "statefulset/keep", "--timeout=60s"], timeout=90)
        # Give the controllers' first syncs after the restart time to act, then compare.
        wait_for("status observed after restart", lambda: get(
            again, "statefulset", "keep")["status"].get("readyReplicas") == 3)
        got = {n: p["metadata"]["uid"] for n, p in by_name(pods(again, "sts=keep")).items()}
        if got != uids:
            raise Fail("pods after the restart %s, before %s" % (got, uids))
    finally:
        again.stop()


CHECKS = [check_daemonset_follows_nodes, check_daemonset_rolling_update,
          check_statefulset_ordered_scale, check_statefulset_rolling_update,
          check_statefulset_claims, check_statefulset_survives_kill]


def main():
    run_against_up(CHECKS, "berth-up-dssts-e2e-", demo_nodes=NODES)


if __name__ == "__main__":
    main()
