#!/usr/bin/env python3
"""End-to-end tests of Dynamic Resource Allocation through `berth up`: the API, the resource
claim controller, the simulated kubelets' ResourceSlices and the DynamicResources scheduler
plugin together, with the real kubectl and the official Python client.

Usage: run_dra_e2e.py BERTH [CHECK ...]

Two demo nodes; only demo-node-001 has devices: one GPU (driver gpu.example.com, 80Gi) and a
partitionable device (driver mig.example.com: 80Gi of shared memory counters, offered whole or
as two 40Gi halves). Then:

* a GPU DeviceClass whose CEL selector reads device.capacity; two pods whose claims come from
  one template: the first runs on the GPU node with its claim allocated and reserved; the
  second, for which no device is left, stays Pending with DynamicResources' reason, and runs
  once the first is deleted (its claim deleted and the device freed);
* a claim whose selector no device matches keeps its pod Pending;
* a partitioned device: a pod holding the whole device keeps a pod asking for a half Pending;
  two halves fit together;
* a shared ResourceClaim named by two pods: both run on the same node, the claim reserved for
  both, allocated once;
* the Python client reads the allocation; the claim carries the scheduler's delete-protection
  finalizer, and deleting it while its pods run leaves it allocated until they are gone;
* a claim whose last pod is gone is deallocated and loses the finalizer, freeing its device;
* a DeviceTaintRule tainting the GPU (NoSchedule) keeps a pod without a toleration Pending,
  lets one whose claim tolerates it run, and deleting the rule lets the first run.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import REPO, Fail, run_against_up, wait_for, run_python_client  # noqa: E402

GPU_NODE = "demo-node-001"
PROTECTION = "resource.kubernetes.io/delete-protection"
DEVICES = """\
driver: gpu.example.com
nodeSelector:
  matchLabels: {kubernetes.io/hostname: demo-node-001}
devices:
- name: gpu
  count: 1
  attributes:
    model: LATEST-GPU-MODEL
  capacity:
    memory: 80Gi
---
driver: mig.example.com
nodeSelector:
  matchLabels: {kubernetes.io/hostname: demo-node-001}
sharedCounters:
- name: card-0
  counters: {memory: 80Gi}
devices:
- name: card-0-full
  attributes: {profile: full}
  consumesCounters:
  - counterSet: card-0
    counters: {memory: 80Gi}
- name: card-0-half-a
  attributes: {profile: half}
  consumesCounters:
  - counterSet: card-0
    counters: {memory: 40Gi}
- name: card-0-half-b
  attributes: {profile: half}
  consumesCounters:
  - counterSet: card-0
    counters: {memory: 40Gi}
"""

MIG_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
             "metadata": {"name": "mig.example.com"},
             "spec": {"selectors": [{"cel": {"expression":
                                             'device.driver == "mig.example.com"'}}]}}


def apply(up, *objs):
    up.kubectl(["apply", "-f", "-"], stdin="\n".join(json.dumps(o) for o in objs))


def get_json(up, args):
    return json.loads(up.kubectl(["get"] + args + ["-o", "json"])[1])


def claim_template(name, device_class, selector=None):
    request = {"name": "dev", "exactly": {"deviceClassName": device_class}}
    if selector:
        request["exactly"]["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request]}}}}


def pod(name, template=None, claim=None):
    ref = {"name": "dev"}
    if template:
        ref["resourceClaimTemplateName"] = template
    else:
        ref["resourceClaimName"] = claim
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "dev"}]}}],
                     "resourceClaims": [ref]}}


def pod_json(up, name):
    return get_json(up, ["pod", name])


def running(up, name, timeout=30):
    return wait_for("pod %s Running" % name,
                    lambda: pod_json(up, name)["status"].get("phase") == "Running" or None,
                    timeout=timeout)


def unschedulable(up, name):
    def why():
        for c in pod_json(up, name)["status"].get("conditions", []):
            if c["type"] == "PodScheduled" and c["status"] == "False":
                return c.get("message") or "?"
        return None
    return wait_for("pod %s unschedulable" % name, why, timeout=30)


def claim_name(up, pod_name):
    def name():
        for s in pod_json(up, pod_name)["status"].get("resourceClaimStatuses") or []:
            if s["name"] == "dev":
                return s.get("resourceClaimName")
        return None
    return wait_for("generated claim of %s" % pod_name, name, timeout=30)


def delete_pod(up, name):
    up.kubectl(["delete", "pod", name, "--wait=true", "--timeout=60s"], timeout=90)


def check_one_gpu_two_pods(up):
    up.kubectl(["apply", "-f", os.path.join(REPO, "examples", "up", "dra", "deviceclass.yaml")])
    apply(up, claim_template("one-gpu", "gpu.example.com"))
    apply(up, pod("first", template="one-gpu"))
    running(up, "first")
    first = pod_json(up, "first")
    if first["spec"]["nodeName"] != GPU_NODE:
        raise Fail("first on %s" % first["spec"]["nodeName"])
    claim = get_json(up, ["resourceclaim", claim_name(up, "first")])
    results = claim["status"]["allocation"]["devices"]["results"]
    if [(r["driver"], r["pool"], r["device"]) for r in results] != [
            ("gpu.example.com", GPU_NODE, "gpu-0")]:
        raise Fail("allocation: %r" % results)
    if [r["name"] for r in claim["status"].get("reservedFor", [])] != ["first"]:
        raise Fail("reservedFor: %r" % claim["status"].get("reservedFor"))
    out = up.kubectl(["get", "resourceclaims"])[1]
    if "allocated,reserved" not in out:
        raise Fail("kubectl get resourceclaims:\n" + out)
    apply(up, pod("second", template="one-gpu"))
    message = unschedulable(up, "second")
    if "cannot allocate all claims" not in message:
        raise Fail("second's reason: %s" % message)
    first_claim = claim_name(up, "first")
    delete_pod(up, "first")
    wait_for("first's claim deleted", lambda: up.kubectl(
        ["get", "resourceclaim", first_claim], check=False)[0] != 0 or None, timeout=30)
    running(up, "second")
    delete_pod(up, "second")


def check_no_device_matches(up):
    apply(up, claim_template("huge-gpu", "gpu.example.com",
                             'device.capacity["gpu.example.com"].memory.compareTo('
                             'quantity("1Ti")) >= 0'))
    apply(up, pod("greedy", template="huge-gpu"))
    message = unschedulable(up, "greedy")
    if "cannot allocate all claims" not in message:
        raise Fail("greedy's reason: %s" % message)
    delete_pod(up, "greedy")


def check_partitioned_device(up):
    apply(up, MIG_CLASS)
    apply(up, claim_template("mig-full", "mig.example.com",
                             'device.attributes["mig.example.com"].profile == "full"'))
    apply(up, claim_template("mig-half", "mig.example.com",
                             'device.attributes["mig.example.com"].profile == "half"'))
    apply(up, pod("whole", template="mig-full"))
    running(up, "whole")
    apply(up, pod("half-1", template="mig-half"))
    unschedulable(up, "half-1")
    delete_pod(up, "whole")
    running(up, "half-1")
    apply(up, pod("half-2", template="mig-half"))
    running(up, "half-2")
    devices = set()
    for name in ("half-1", "half-2"):
        claim = get_json(up, ["resourceclaim", claim_name(up, name)])
        devices.update(r["device"] for r in claim["status"]["allocation"]["devices"]["results"])
    if devices != {"card-0-half-a", "card-0-half-b"}:
        raise Fail("halves: %r" % devices)
    delete_pod(up, "half-1")
    delete_pod(up, "half-2")


def check_shared_claim(up):
    apply(up, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": "shared-gpu", "namespace": "default"},
               "spec": {"devices": {"requests": [
                   {"name": "dev", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
    apply(up, pod("share-a", claim="shared-gpu"), pod("share-b", claim="shared-gpu"))
    running(up, "share-a")
    running(up, "share-b")
    nodes = {pod_json(up, n)["spec"]["nodeName"] for n in ("share-a", "share-b")}
    if nodes != {GPU_NODE}:
        raise Fail("shared claim's pods on %r" % nodes)
    claim = get_json(up, ["resourceclaim", "shared-gpu"])
    reserved = sorted(r["name"] for r in claim["status"]["reservedFor"])
    if reserved != ["share-a", "share-b"]:
        raise Fail("reservedFor: %r" % reserved)
    script = r'''
import sys
from kubernetes import client, config, dynamic
config.load_kube_config(sys.argv[1])
dyn = dynamic.DynamicClient(client.ApiClient())
claims = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")
c = claims.get(name="shared-gpu", namespace="default").to_dict()
results = c["status"]["allocation"]["devices"]["results"]
assert [r["device"] for r in results] == ["gpu-0"], results
assert len(c["status"]["reservedFor"]) == 2, c["status"]
print("ok")
'''
    if "ok" not in run_python_client(up, script):
        raise Fail("python client printed no ok")
    # The scheduler marked the claim it allocated; a deletion waits for its pods to go, then for
    # the resource claim controller to deallocate it.
    if PROTECTION not in claim["metadata"].get("finalizers", []):
        raise Fail("finalizers: %r" % claim["metadata"].get("finalizers"))
    up.kubectl(["delete", "resourceclaim", "shared-gpu", "--wait=false"])
    claim = get_json(up, ["resourceclaim", "shared-gpu"])
    if not claim["metadata"].get("deletionTimestamp") or not claim["status"].get("allocation"):
        raise Fail("claim in use after its deletion: %r" % claim)
    delete_pod(up, "share-a")
    delete_pod(up, "share-b")
    wait_for("shared-gpu deleted", lambda: up.kubectl(
        ["get", "resourceclaim", "shared-gpu"], check=False)[0] != 0 or None, timeout=30)


def check_claim_deallocated_when_unused(up):
    apply(up, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": "kept-gpu", "namespace": "default"},
               "spec": {"devices": {"requests": [
                   {"name": "dev", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
    apply(up, pod("user-1", claim="kept-gpu"))
    running(up, "user-1")
    delete_pod(up, "user-1")
    # No consumer left: the claim stays, deallocated and without the scheduler's finalizer, so
    # its device is free for another claim.

    def deallocated():
        c = get_json(up, ["resourceclaim", "kept-gpu"])
        if c["status"].get("allocation") or PROTECTION in c["metadata"].get("finalizers", []):
            return None
        return c
    wait_for("kept-gpu deallocated", deallocated, timeout=30)
    apply(up, pod("after", template="one-gpu"))
    running(up, "after")
    delete_pod(up, "after")
    up.kubectl(["delete", "resourceclaim", "kept-gpu"])


def check_device_taint_rule(up):
    apply(up, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
               "metadata": {"name": "gpu-maintenance"},
               "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": GPU_NODE,
                                           "device": "gpu-0"},
                        "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"}}})
    apply(up, pod("untolerating", template="one-gpu"))
    message = unschedulable(up, "untolerating")
    if "cannot allocate all claims" not in message:
        raise Fail("untolerating's reason: %s" % message)
    tolerating = claim_template("one-gpu-tolerating", "gpu.example.com")
    tolerating["spec"]["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "example.com/maintenance", "operator": "Exists"}]
    apply(up, tolerating, pod("tolerating", template="one-gpu-tolerating"))
    running(up, "tolerating")
    claim = get_json(up, ["resourceclaim", claim_name(up, "tolerating")])
    result = claim["status"]["allocation"]["devices"]["results"][0]
    if result["device"] != "gpu-0" or not result.get("tolerations"):
        raise Fail("tolerating's allocation: %r" % result)
    delete_pod(up, "tolerating")
    # The GPU is free but still tainted: the first pod stays Pending until the rule goes.
    unschedulable(up, "untolerating")
    up.kubectl(["delete", "devicetaintrule", "gpu-maintenance"])
    running(up, "untolerating")
    delete_pod(up, "untolerating")


CHECKS = [check_one_gpu_two_pods, check_no_device_matches, check_partitioned_device,
          check_shared_claim, check_claim_deallocated_when_unused, check_device_taint_rule]


if __name__ == "__main__":
    devices = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    devices.write(DEVICES)
    devices.close()
    try:
        run_against_up(CHECKS, "berth-dra-e2e-", demo_nodes=2,
                       extra=["--node-devices", devices.name])
    finally:
        os.unlink(devices.name)
