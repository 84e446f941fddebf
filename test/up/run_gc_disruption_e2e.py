#!/usr/bin/env python3
"""End-to-end tests of the garbage collector in `berth up`, with the real kubectl.

Usage: run_gc_disruption_e2e.py BERTH [CHECK ...]

* `kubectl delete rs --cascade=background`: the ReplicaSet goes at once, its pods after it;
* `--cascade=foreground`: the pods go first, then the ReplicaSet (held by foregroundDeletion
  meanwhile);
* `--cascade=orphan`: the ReplicaSet goes, its pods stay with no ownerReferences;
* a ConfigMap whose hand-written ownerReference names an owner that does not exist is deleted,
  one whose owner exists is kept;
* `kubectl delete namespace` still removes a namespace holding a ReplicaSet and its pods;
* a PodDisruptionBudget's status (expectedPods, currentHealthy, desiredHealthy,
  disruptionsAllowed, the DisruptionAllowed condition) as `kubectl get pdb` shows it, for
  minAvailable and maxUnavailable;
* `kubectl drain` of the node holding every pod of a budgeted ReplicaSet: evictions beyond the
  budget are refused (429) and retried, and the drain completes as replacements become Ready
  on another node.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for  # noqa: E402


def apply(up, obj):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))


def get(up, kind, name, ns="default"):
    rc, out, _ = up.kubectl(["get", kind, name, "-n", ns, "-o", "json"], check=False)
    return json.loads(out) if rc == 0 else None


def pods_of(up, app, ns="default"):
    _, out, _ = up.kubectl(["get", "pods", "-n", ns, "-l", "app=" + app, "-o", "json"])
    return json.loads(out)["items"]


def replica_set(name, replicas=3, ns="default"):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def start_set(up, name, replicas=3, ns="default"):
    apply(up, replica_set(name, replicas, ns))
    wait_for("%d pods of %s" % (replicas, name),
             lambda: len(pods_of(up, name, ns)) == replicas, 60)


def check_background_cascade_deletes_pods_after_the_set(up):
    start_set(up, "bg")
    up.kubectl(["delete", "rs", "bg", "--cascade=background"])
    if get(up, "rs", "bg"):
        raise Fail("the ReplicaSet is still there after a background deletion")
    wait_for("the pods of bg collected", lambda: not pods_of(up, "bg"), 60)


def check_foreground_cascade_deletes_pods_first(up):
    start_set(up, "fg")
    up.kubectl(["delete", "rs", "fg", "--cascade=foreground", "--wait=false"])
    held = get(up, "rs", "fg")
    if held is not None and "foregroundDeletion" not in held["metadata"].get("finalizers", []):
        raise Fail("the ReplicaSet is held without foregroundDeletion: %s" % held["metadata"])
    # kubectl waits for the owner; by then its pods are gone too.
    up.kubectl(["wait", "--for=delete", "rs/fg", "--timeout=60s"], check=False)
    wait_for("rs fg gone", lambda: get(up, "rs", "fg") is None, 60)
    if pods_of(up, "fg"):
        raise Fail("pods left after a foreground deletion: %s"
                   % [p["metadata"]["name"] for p in pods_of(up, "fg")])


def check_orphan_cascade_keeps_pods_without_owner(up):
    start_set(up, "orph")
    up.kubectl(["delete", "rs", "orph", "--cascade=orphan"])
    wait_for("rs orph gone", lambda: get(up, "rs", "orph") is None, 60)
    pods = pods_of(up, "orph")
    if len(pods) != 3:
        raise Fail("orphaned pods: %d, want 3" % len(pods))
    owned = [p["metadata"]["name"] for p in pods if p["metadata"].get("ownerReferences")]
    if owned:
        raise Fail("pods still owned after orphaning: %s" % owned)
    up.kubectl(["delete", "pods", "-l", "app=orph", "--wait=false"])


def check_absent_owner_by_uid(up):
    apply(up, {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "owner", "namespace": "default"}})
    owner = get(up, "configmap", "owner")

    def dependent(name, uid):
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default",
                             "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                                                  "name": "owner", "uid": uid}]}}
    apply(up, dependent("kept", owner["metadata"]["uid"]))
    apply(up, dependent("dangling", "4d1f9a60-0000-4000-8000-000000000000"))
    wait_for("dangling collected", lambda: get(up, "configmap", "dangling") is None, 60)
    if get(up, "configmap", "kept") is None:
        raise Fail("a ConfigMap whose owner exists was deleted")
    up.kubectl(["delete", "configmap", "owner"])
    wait_for("kept collected with its owner", lambda: get(up, "configmap", "kept") is None, 60)


def check_namespace_deletion_still_works(up):
    up.kubectl(["create", "namespace", "gc-ns"])
    start_set(up, "inns", 2, "gc-ns")
    up.kubectl(["delete", "namespace", "gc-ns", "--timeout=90s"])
    rc, _, _ = up.kubectl(["get", "namespace", "gc-ns"], check=False)
    if rc == 0:
        raise Fail("namespace gc-ns still exists")


def pdb(name, app, **spec):
    spec["selector"] = {"matchLabels": {"app": app}}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def ready_pods(up, app):
    return [p for p in pods_of(up, app) if not p["metadata"].get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in p.get("status", {}).get("conditions", []))]


def budget_status(up, name):
    return (get(up, "pdb", name) or {}).get("status", {})


def check_pdb_status_as_kubectl_shows_it(up):
    start_set(up, "guarded", 4)
    wait_for("4 ready pods", lambda: len(ready_pods(up, "guarded")) == 4, 60)
    apply(up, pdb("min", "guarded", minAvailable="50%"))
    apply(up, pdb("max", "guarded", maxUnavailable=1))
    wait_for("min's status", lambda: budget_status(up, "min").get("disruptionsAllowed") == 2, 30)
    st = budget_status(up, "min")
    want = {"expectedPods": 4, "currentHealthy": 4, "desiredHealthy": 2, "disruptionsAllowed": 2}
    if {k: st.get(k) for k in want} != want:
        raise Fail("min's status: %s" % st)
    cond = [c for c in st.get("conditions", []) if c["type"] == "DisruptionAllowed"]
    if not cond or cond[0]["status"] != "True" or cond[0]["reason"] != "SufficientPods":
        raise Fail("min's condition: %s" % st.get("conditions"))
    wait_for("max's status", lambda: budget_status(up, "max").get("desiredHealthy") == 3, 30)
    _, out, _ = up.kubectl(["get", "pdb", "max", "--no-headers"])
    # NAME MIN-AVAILABLE MAX-UNAVAILABLE ALLOWED-DISRUPTIONS AGE
    if out.split()[:4] != ["max", "N/A", "1", "1"]:
        raise Fail("kubectl get pdb max: %r" % out)
    # Scaling the set changes what the budget expects.
    up.kubectl(["scale", "rs", "guarded", "--replicas=2"])
    wait_for("expectedPods 2", lambda: budget_status(up, "min").get("expectedPods") == 2, 60)
    wait_for("min allows 1", lambda: budget_status(up, "min").get("disruptionsAllowed") == 1, 60)
    up.kubectl(["delete", "pdb", "min", "max"])
    up.kubectl(["delete", "rs", "guarded"])


def check_drain_waits_for_the_budget(up):
    _, out, _ = up.kubectl(["get", "nodes", "-o", "name"])
    nodes = [n.split("/", 1)[1] for n in out.split()]
    target, spare = nodes[0], nodes[1]
    others = nodes[1:]
    up.kubectl(["cordon"] + others)
    try:
        start_set(up, "drained", 3)
        wait_for("3 ready pods", lambda: len(ready_pods(up, "drained")) == 3, 60)
        if {p["spec"].get("nodeName") for p in pods_of(up, "drained")} != {target}:
            raise Fail("pods not all on %s" % target)
        apply(up, pdb("drained", "drained", minAvailable=2))
        wait_for("budget allows 1",
                 lambda: budget_status(up, "drained").get("disruptionsAllowed") == 1, 30)
        up.kubectl(["uncordon", spare])
        rc, out, err = up.kubectl(["drain", target, "--ignore-daemonsets", "--timeout=120s",
                                   "--grace-period=0"], check=False, timeout=150)
        if rc != 0:
            raise Fail("drain failed: %s %s" % (out, err))
        if "disruption budget" not in (out + err):
            raise Fail("drain never waited for the budget:\n%s%s" % (out, err))
        wait_for("3 ready pods on %s" % spare,
                 lambda: len([p for p in ready_pods(up, "drained")
                              if p["spec"].get("nodeName") == spare]) == 3, 60)
    finally:
        up.kubectl(["uncordon"] + nodes, check=False)
        up.kubectl(["delete", "pdb", "drained"], check=False)
        up.kubectl(["delete", "rs", "drained"], check=False)


CHECKS = [
    check_background_cascade_deletes_pods_after_the_set,
    check_foreground_cascade_deletes_pods_first,
    check_orphan_cascade_keeps_pods_without_owner,
    check_absent_owner_by_uid,
    check_namespace_deletion_still_works,
    check_pdb_status_as_kubectl_shows_it,
    check_drain_waits_for_the_budget,
]


def main():
    run_against_up(CHECKS, "berth-gc-e2e-")


if __name__ == "__main__":
    main()
