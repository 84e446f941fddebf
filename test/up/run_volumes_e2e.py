#!/usr/bin/env python3
"""End-to-end tests of volumes in `berth up` (persistent volume binder, berth.dev/local
provisioner, default StorageClass), with the real kubectl.

Usage: run_volumes_e2e.py BERTH [CHECK ...]

* the `standard` class exists and is the default; a claim created without a class gets it
  (created or server-side applied), one asking for "" keeps "";
* a static PV and a claim of an Immediate class bind: claimRef, volumeName, the annotations,
  phases Bound, and the smallest fitting PV is chosen; deleting the claim releases the PV
  (Retain keeps it);
* a WaitForFirstConsumer claim stays Pending until a pod uses it; then the pod runs, the claim
  is Bound to the provisioned pvc-<uid> with node affinity to the pod's node and the node's
  zone label, and a second pod using the claim lands on that node's zone; deleting the pods
  and the claim deletes the PV (reclaim policy Delete);
* a WaitForFirstConsumer class without a provisioner: the scheduler puts the pod on the node
  of the only fitting local volume and binds it; the binder completes the phases;
* a class with allowedTopologies on zones: the volume's affinity is the first pod's zone, and
  later pods using the claim all land in that zone.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for  # noqa: E402

ZONE = "topology.kubernetes.io/zone"


def apply(up, obj):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))


def get(up, kind, name, ns=None):
    args = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
    rc, out, _ = up.kubectl(args, check=False)
    return json.loads(out) if rc == 0 else None


def claim(name, cls=None, size="1Gi", ns="default"):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def volume(name, cls, size, policy="Retain"):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": cls, "persistentVolumeReclaimPolicy": policy,
                     "hostPath": {"path": "/tmp/" + name}}}


def pod(name, claim_name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "volumes": [{"name": "data",
                                  "persistentVolumeClaim": {"claimName": claim_name}}]}}


def phase(obj):
    return (obj or {}).get("status", {}).get("phase")


def check_default_class_exists_and_is_applied(up):
    sc = get(up, "storageclass", "standard")
    if not sc:
        raise Fail("no StorageClass standard")
    ann = sc["metadata"].get("annotations", {})
    if ann.get("storageclass.kubernetes.io/is-default-class") != "true":
        raise Fail("standard is not the default class: %s" % ann)
    if sc.get("volumeBindingMode") != "WaitForFirstConsumer" or \
            sc.get("provisioner") != "berth.dev/local":
        raise Fail("standard class: %s" % sc)
    apply(up, claim("defaulted"))
    got = get(up, "pvc", "defaulted", "default")
    if got["spec"].get("storageClassName") != "standard":
        raise Fail("claim without a class got %r" % got["spec"].get("storageClassName"))
    up.kubectl(["apply", "--server-side", "-f", "-"], stdin=json.dumps(claim("applied")))
    if get(up, "pvc", "applied", "default")["spec"].get("storageClassName") != "standard":
        raise Fail("a claim created by server-side apply did not get the default class")
    apply(up, claim("no-class", cls=""))
    if get(up, "pvc", "no-class", "default")["spec"].get("storageClassName") != "":
        raise Fail("a claim asking for no class (\"\") got one")
    up.kubectl(["delete", "pvc", "defaulted", "applied", "no-class"])


def check_static_volume_binds_immediately(up):
    apply(up, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "manual"}, "provisioner": "kubernetes.io/no-provisioner",
               "volumeBindingMode": "Immediate"})
    for name, size in (("pv-big", "10Gi"), ("pv-small", "2Gi"), ("pv-tiny", "500Mi")):
        apply(up, volume(name, "manual", size))
    wait_for("the PVs Available",
             lambda: all(phase(get(up, "pv", n)) == "Available"
                         for n in ("pv-big", "pv-small", "pv-tiny")))
    apply(up, claim("static", cls="manual", size="1Gi"))
    pvc = wait_for("the claim Bound",
                   lambda: (lambda c: c if phase(c) == "Bound" else None)(
                       get(up, "pvc", "static", "default")))
    if pvc["spec"].get("volumeName") != "pv-small":
        raise Fail("bound to %r, not the smallest fitting pv-small" % pvc["spec"].get("volumeName"))
    ann = pvc["metadata"].get("annotations", {})
    if ann.get("pv.kubernetes.io/bind-completed") != "yes" or \
            ann.get("pv.kubernetes.io/bound-by-controller") != "yes":
        raise Fail("claim annotations: %s" % ann)
    if pvc["status"].get("capacity", {}).get("storage") != "2Gi":
        raise Fail("claim status: %s" % pvc["status"])
    pv = wait_for("the PV Bound",
                  lambda: (lambda v: v if phase(v) == "Bound" else None)(get(up, "pv", "pv-small")))
    ref = pv["spec"].get("claimRef", {})
    if ref.get("name") != "static" or ref.get("uid") != pvc["metadata"]["uid"]:
        raise Fail("claimRef: %s" % ref)
    if pv["metadata"].get("annotations", {}).get("pv.kubernetes.io/bound-by-controller") != "yes":
        raise Fail("PV annotations: %s" % pv["metadata"].get("annotations"))
    up.kubectl(["delete", "pvc", "static"])
    wait_for("the PV Released", lambda: phase(get(up, "pv", "pv-small")) == "Released")
    up.kubectl(["delete", "pv", "pv-big", "pv-small", "pv-tiny"])


def running_node(up, name):
    p = get(up, "pod", name, "default")
    if p and phase(p) == "Running":
        return p["spec"]["nodeName"]
    return None


def check_wait_for_first_consumer_provisions_on_the_pods_node(up):
    apply(up, claim("data", cls="standard", size="3Gi"))
    pvc = get(up, "pvc", "data", "default")
    # No pod uses it: nothing binds or provisions (as long as nothing asks, it stays so).
    wait_for("the claim Pending", lambda: phase(get(up, "pvc", "data", "default")) == "Pending")
    if pvc["spec"].get("volumeName") or get(up, "pv", "pvc-" + pvc["metadata"]["uid"]):
        raise Fail("a WaitForFirstConsumer claim was bound before a pod used it")
    apply(up, pod("user", "data"))
    node = wait_for("the pod Running", lambda: running_node(up, "user"))
    pvc = wait_for("the claim Bound",
                   lambda: (lambda c: c if phase(c) == "Bound" else None)(
                       get(up, "pvc", "data", "default")))
    pv_name = "pvc-" + pvc["metadata"]["uid"]
    if pvc["spec"].get("volumeName") != pv_name:
        raise Fail("claim bound to %r, not %s" % (pvc["spec"].get("volumeName"), pv_name))
    ann = pvc["metadata"].get("annotations", {})
    if ann.get("volume.kubernetes.io/selected-node") != node or \
            ann.get("volume.kubernetes.io/storage-provisioner") != "berth.dev/local":
        raise Fail("claim annotations: %s" % ann)
    pv = wait_for("the PV Bound",
                  lambda: (lambda v: v if phase(v) == "Bound" else None)(get(up, "pv", pv_name)))
    if pv["metadata"].get("annotations", {}).get("pv.kubernetes.io/provisioned-by") != \
            "berth.dev/local":
        raise Fail("PV annotations: %s" % pv["metadata"].get("annotations"))
    if pv["spec"]["capacity"]["storage"] != "3Gi" or \
            pv["spec"]["persistentVolumeReclaimPolicy"] != "Delete":
        raise Fail("PV spec: %s" % pv["spec"])
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    exprs = terms[0]["matchExpressions"]
    if exprs != [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]:
        raise Fail("PV node affinity: %s (pod on %s)" % (terms, node))
    zone = get(up, "node", node)["metadata"]["labels"].get(ZONE)
    if not zone or pv["metadata"].get("labels", {}).get(ZONE) != zone:
        raise Fail("PV labels %s, node zone %s" % (pv["metadata"].get("labels"), zone))
    # A second pod using the claim goes where the volume is.
    apply(up, pod("second", "data"))
    node2 = wait_for("the second pod Running", lambda: running_node(up, "second"))
    if get(up, "node", node2)["metadata"]["labels"].get(ZONE) != zone:
        raise Fail("second pod on %s, outside zone %s" % (node2, zone))
    up.kubectl(["delete", "pod", "user", "second", "--wait=false"])
    up.kubectl(["delete", "pvc", "data", "--wait=false"])
    wait_for("the provisioned PV deleted", lambda: get(up, "pv", pv_name) is None)


def check_allowed_topologies_pin_the_volume_to_a_zone(up):
    apply(up, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "zonal"}, "provisioner": "berth.dev/local",
               "volumeBindingMode": "WaitForFirstConsumer",
               "allowedTopologies": [{"matchLabelExpressions": [
                   {"key": ZONE, "values": ["zone-a", "zone-b", "zone-c"]}]}]})
    apply(up, claim("shared", cls="zonal"))
    apply(up, pod("z1", "shared"))
    node = wait_for("z1 Running", lambda: running_node(up, "z1"))
    zone = get(up, "node", node)["metadata"]["labels"][ZONE]
    pvc = wait_for("the claim Bound",
                   lambda: (lambda c: c if phase(c) == "Bound" else None)(
                       get(up, "pvc", "shared", "default")))
    pv = get(up, "pv", pvc["spec"]["volumeName"])
    exprs = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"]
    if exprs != [{"key": ZONE, "operator": "In", "values": [zone]}]:
        raise Fail("PV node affinity %s, pod in %s" % (exprs, zone))
    # More pods using the claim: each in the volume's zone, not necessarily on z1's node.
    zones = set()
    for name in ("z2", "z3", "z4"):
        apply(up, pod(name, "shared"))
        n = wait_for(name + " Running", lambda: running_node(up, name))
        zones.add(get(up, "node", n)["metadata"]["labels"][ZONE])
    if zones != {zone}:
        raise Fail("pods using a volume of %s landed in %s" % (zone, sorted(zones)))


def check_scheduler_binds_a_static_volume_on_the_pods_node(up):
    apply(up, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "local-static"},
               "provisioner": "kubernetes.io/no-provisioner",
               "volumeBindingMode": "WaitForFirstConsumer"})
    nodes = sorted(n["metadata"]["name"] for n in json.loads(
        up.kubectl(["get", "nodes", "-o", "json"])[1])["items"])
    # One local volume on the last node only: the pod must go there.
    target = nodes[-1]
    pv = volume("local-1", "local-static", "5Gi")
    pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [target]}]}]}}
    apply(up, pv)
    wait_for("local-1 Available", lambda: phase(get(up, "pv", "local-1")) == "Available")
    apply(up, claim("local-data", cls="local-static"))
    apply(up, pod("local-user", "local-data"))
    node = wait_for("local-user Running", lambda: running_node(up, "local-user"))
    if node != target:
        raise Fail("pod on %s, the volume's node is %s" % (node, target))
    pvc = wait_for("the claim Bound",
                   lambda: (lambda c: c if phase(c) == "Bound" else None)(
                       get(up, "pvc", "local-data", "default")))
    if pvc["spec"].get("volumeName") != "local-1":
        raise Fail("claim bound to %r" % pvc["spec"].get("volumeName"))
    pv = wait_for("local-1 Bound",
                  lambda: (lambda v: v if phase(v) == "Bound" else None)(get(up, "pv", "local-1")))
    if pv["metadata"].get("annotations", {}).get("pv.kubernetes.io/bound-by-controller") != "yes":
        raise Fail("PV annotations: %s" % pv["metadata"].get("annotations"))


CHECKS = [
    check_default_class_exists_and_is_applied,
    check_static_volume_binds_immediately,
    check_wait_for_first_consumer_provisions_on_the_pods_node,
    check_allowed_topologies_pin_the_volume_to_a_zone,
    check_scheduler_binds_a_static_volume_on_the_pods_node,
]


def main():
    run_against_up(CHECKS, "berth-volumes-e2e-", demo_nodes=6)


if __name__ == "__main__":
    main()
