#!/usr/bin/env python3
"""End-to-end tests of the garbage collector in `berth up`, with the real kubectl.

Usage: run_gc_disruption_e2e.py BERTH [CHECK ...]

* `kubectl delete rs --cascade=background`: the ReplicaSet goes at once, its pods after it;
* `--cascade=foreground`: the pods go first, then the ReplicaSet (held by foregroundDeletion
  meanwhile);
* `--cascade=orphan`: the ReplicaSet goes, its pods stay with no ownerReferences;
* a ConfigMap whose hand-written ownerReference names an owner that does not exist is deleted,
  one whose owner exists is kept;
* `kubectl delete namespace` still removes a namespace holding a ReplicaSet and its pods.
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


CHECKS = [
    check_background_cascade_deletes_pods_after_the_set,
    check_foreground_cascade_deletes_pods_first,
    check_orphan_cascade_keeps_pods_without_owner,
    check_absent_owner_by_uid,
    check_namespace_deletion_still_works,
]


def main():
    run_against_up(CHECKS, "berth-gc-e2e-")


if __name__ == "__main__":
    main()
