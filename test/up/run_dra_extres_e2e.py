#!/usr/bin/env python3
"""End-to-end tests of extended resources backed by DRA (DRAExtendedResource) through
`berth up --node-devices examples/up/dra/gpus.yaml` (four simulated GPUs on each node), with
the real kubectl and the official Python client:

* examples/up/dra/extended-resource-class.yaml (a DeviceClass with extendedResourceName
  example.com/gpu) and extended-resource-pod.yaml (a pod requesting example.com/gpu: 1, no
  claims of its own) applied as docs/up.md says: the pod runs; the scheduler created its
  ResourceClaim (owned by the pod, annotated, one device allocated, reserved for the pod) and
  named it in the pod's status.extendedResourceClaimStatus; the Python client reads both;
* the implicit name deviceclass.resource.kubernetes.io/<class> works the same, for 2 devices;
* `kubectl explain` describes the new fields;
* deleting the pod removes its claim;
* a pod asking for more GPUs than any node has stays Pending, rejected by DynamicResources on
  every node, and `berth explain` names the extended resource that cannot be satisfied.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import REPO, Fail, run_against_up, wait_for, run_python_client  # noqa: E402

EXAMPLES = os.path.join(REPO, "examples", "up", "dra")
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def get_json(up, args):
    return json.loads(up.kubectl(["get"] + args + ["-o", "json"])[1])


def gpu_pod(name, count, resource="example.com/gpu"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "ctr", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {resource: str(count)},
                                                   "limits": {resource: str(count)}}}]}}


def running(up, name, timeout=30):
    return wait_for("pod %s Running" % name,
                    lambda: get_json(up, ["pod", name])["status"].get("phase") == "Running"
                    or None, timeout=timeout)


def extended_claim(up, pod_name):
    """The pod's status.extendedResourceClaimStatus, once written."""
    return wait_for("extendedResourceClaimStatus of %s" % pod_name,
                    lambda: get_json(up, ["pod", pod_name])["status"].get(
                        "extendedResourceClaimStatus"), timeout=30)


def check_claim(up, pod_name, devices, resource):
    pod = get_json(up, ["pod", pod_name])
    status = extended_claim(up, pod_name)
    want_mappings = [{"containerName": "ctr", "resourceName": resource,
                      "requestName": "container-0-request-0"}]
    if status.get("requestMappings") != want_mappings:
        raise Fail("requestMappings: %r" % status)
    claim = get_json(up, ["resourceclaim", status["resourceClaimName"]])
    meta = claim["metadata"]
    if not meta["name"].startswith(pod_name + "-extended-resources-"):
        raise Fail("claim name %s" % meta["name"])
    if meta.get("annotations", {}).get(ANNOTATION) != "true":
        raise Fail("claim annotations: %r" % meta.get("annotations"))
    owners = meta.get("ownerReferences") or []
    if [(o["kind"], o["uid"], o.get("controller")) for o in owners] != \
            [("Pod", pod["metadata"]["uid"], True)]:
        raise Fail("claim owners: %r" % owners)
    results = claim["status"]["allocation"]["devices"]["results"]
    if len(results) != devices or {r["request"] for r in results} != {"container-0-request-0"}:
        raise Fail("allocation results: %r" % results)
    pools = {r["pool"] for r in results}
    if pools != {pod["spec"]["nodeName"]}:
        raise Fail("devices from pools %r, pod on %s" % (pools, pod["spec"]["nodeName"]))
    reserved = [r["uid"] for r in claim["status"].get("reservedFor", [])]
    if reserved != [pod["metadata"]["uid"]]:
        raise Fail("reservedFor: %r" % reserved)
    return claim


def check_extended_resource_pod(up):
    up.kubectl(["apply", "-f", os.path.join(EXAMPLES, "extended-resource-class.yaml")])
    up.kubectl(["apply", "-f", os.path.join(EXAMPLES, "extended-resource-pod.yaml")])
    running(up, "extended-gpu-pod")
    claim = check_claim(up, "extended-gpu-pod", 1, "example.com/gpu")
    script = r'''
import sys
from kubernetes import client, config, dynamic
config.load_kube_config(sys.argv[1])
import json
# Read as JSON: the client's typed V1PodStatus may predate extendedResourceClaimStatus.
raw = client.CoreV1Api().read_namespaced_pod("extended-gpu-pod", "default",
                                             _preload_content=False)
name = json.loads(raw.data)["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
assert name == sys.argv[2], (name, sys.argv[2])
dyn = dynamic.DynamicClient(client.ApiClient())
claims = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")
c = claims.get(name=name, namespace="default").to_dict()
assert len(c["status"]["allocation"]["devices"]["results"]) == 1, c["status"]
print("ok")
'''
    if "ok" not in run_python_client(up, script, claim["metadata"]["name"]):
        raise Fail("python client printed no ok")


def check_implicit_name(up):
    resource = "deviceclass.resource.kubernetes.io/gpu-extended.example.com"
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(gpu_pod("implicit-pod", 2, resource)))
    running(up, "implicit-pod")
    check_claim(up, "implicit-pod", 2, resource)


def check_explain_fields(up):
    out = up.kubectl(["explain", "pod.status.extendedResourceClaimStatus"])[1]
    for want in ("resourceClaimName", "requestMappings"):
        if want not in out:
            raise Fail("kubectl explain pod.status.extendedResourceClaimStatus:\n" + out)
    out = up.kubectl(["explain", "deviceclass.spec.extendedResourceName"])[1]
    if "example.com/gpu" not in out:
        raise Fail("kubectl explain deviceclass.spec.extendedResourceName:\n" + out)


def check_delete_pod_removes_claim(up):
    name = extended_claim(up, "extended-gpu-pod")["resourceClaimName"]
    up.kubectl(["delete", "pod", "extended-gpu-pod", "--wait=true", "--timeout=60s"], timeout=90)

    def gone():
        rc, _ = up.kubectl(["get", "resourceclaim", name], check=False)[:2]
        return rc != 0 or None
    wait_for("claim %s deleted" % name, gone, timeout=30)


def check_too_many_stays_pending(up):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(gpu_pod("too-many", 5)))

    def why():
        for c in get_json(up, ["pod", "too-many"])["status"].get("conditions", []):
            if c["type"] == "PodScheduled" and c["status"] == "False":
                return c.get("message") or "?"
        return None
    message = wait_for("pod too-many unschedulable", why, timeout=30)
    if "cannot allocate all claims" not in message or "Insufficient" in message:
        raise Fail("PodScheduled message: %s" % message)
    if get_json(up, ["pod", "too-many"])["spec"].get("nodeName"):
        raise Fail("too-many was bound")
    p = subprocess.run([up.berth, "explain", "too-many", "-n", "default", "--kubeconfig",
                        up.kubeconfig], capture_output=True, text=True, timeout=60)
    want = "extended resource example.com/gpu (container ctr): wants 5 devices"
    if want not in p.stdout:
        raise Fail("berth explain lacks %r:\n%s%s" % (want, p.stdout[-3000:], p.stderr[-1000:]))


CHECKS = [check_extended_resource_pod, check_implicit_name, check_explain_fields,
          check_delete_pod_removes_claim, check_too_many_stays_pending]


if __name__ == "__main__":
    run_against_up(CHECKS, "berth-dra-extres-e2e-", demo_nodes=2,
                   extra=["--node-devices", os.path.join(EXAMPLES, "gpus.yaml")])
