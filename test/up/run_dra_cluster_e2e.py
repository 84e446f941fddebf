#!/usr/bin/env python3
"""End-to-end tests of the cluster side of Dynamic Resource Allocation in `berth up`: the
simulated kubelets' ResourceSlices and the resource claim controller, with the real kubectl.

Usage: run_dra_cluster_e2e.py BERTH [CHECK ...]

Starts `berth up --node-devices examples/up/dra/gpus.yaml` on four demo nodes, then:

* `kubectl get resourceslices` lists one slice per node: driver gpu.example.com, the node's
  pool (generation 1, one slice), four GPUs with memory capacity and model/index attributes,
  owned by the Node;
* a pod whose claim names a ResourceClaimTemplate gets a ResourceClaim named
  "<pod>-<claim>-xxxxx", annotated resource.kubernetes.io/pod-claim-name, controlled by the pod,
  recorded in the pod's status.resourceClaimStatuses;
* the bound pod stays Pending (ContainerCreating) until the claim is allocated and reserved for
  it (written here through kubectl when no scheduler plugin has done it), then runs;
* deleting the pod deletes its claim;
* a --node-devices file with an error stops `berth up` at once, naming the field.
The pod and its template are docs/up.md's examples/up/dra/gpu-claim.yaml.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import REPO, Fail, run_against_up, wait_for  # noqa: E402

DEVICES = os.path.join(REPO, "examples", "up", "dra", "gpus.yaml")
CLAIM_EXAMPLE = os.path.join(REPO, "examples", "up", "dra", "gpu-claim.yaml")
DEMO_NODES = 4
DRIVER = "gpu.example.com"


def get_json(up, args):
    return json.loads(up.kubectl(["get"] + args + ["-o", "json"])[1])


def check_every_node_publishes_its_slice(up):
    nodes = sorted(n["metadata"]["name"] for n in get_json(up, ["nodes"])["items"])
    if len(nodes) != DEMO_NODES:
        raise Fail("nodes: %r" % nodes)

    def slices():
        items = get_json(up, ["resourceslices"])["items"]
        return items if len(items) == len(nodes) else None

    items = wait_for("a ResourceSlice per node", slices, timeout=30)
    by_node = {s["spec"]["nodeName"]: s for s in items}
    if sorted(by_node) != nodes:
        raise Fail("slices' nodes: %r" % sorted(by_node))
    for node, s in by_node.items():
        spec, meta = s["spec"], s["metadata"]
        if not meta["name"].startswith(node + "-gpu-example-com-"):
            raise Fail("slice name %s" % meta["name"])
        if spec["driver"] != DRIVER or spec["pool"] != {
                "name": node, "generation": 1, "resourceSliceCount": 1}:
            raise Fail("slice spec: %r" % spec)
        names = [d["name"] for d in spec["devices"]]
        if names != ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]:
            raise Fail("devices: %r" % names)
        gpu = spec["devices"][2]
        if gpu["capacity"]["memory"]["value"] != "80Gi" or gpu["attributes"]["index"] != {
                "int": 2} or "string" not in gpu["attributes"]["model"]:
            raise Fail("device: %r" % gpu)
        owner = meta["ownerReferences"][0]
        if owner["kind"] != "Node" or owner["name"] != node:
            raise Fail("owner: %r" % owner)
    out = up.kubectl(["get", "resourceslices"])[1]
    if any(n not in out for n in nodes):
        raise Fail("kubectl get resourceslices:\n" + out)


def claim_of(up, pod):
    statuses = get_json(up, ["pod", pod])["status"].get("resourceClaimStatuses") or []
    for s in statuses:
        if s["name"] == "gpu":
            return s.get("resourceClaimName")
    return None


def check_template_claim_runs_pod_and_goes_with_it(up):
    # docs/up.md's example: a DeviceClass, the template single-gpu and the pod trainer.
    up.kubectl(["apply", "-f", CLAIM_EXAMPLE])
    pod = get_json(up, ["pod", "trainer"])
    name = wait_for("the pod's resourceClaimStatuses", lambda: claim_of(up, "trainer"))
    if not name.startswith("trainer-gpu-") or len(name) != len("trainer-gpu-") + 5:
        raise Fail("claim name %s" % name)
    claim = get_json(up, ["resourceclaim", name])
    meta = claim["metadata"]
    if meta["annotations"].get("resource.kubernetes.io/pod-claim-name") != "gpu":
        raise Fail("annotations: %r" % meta.get("annotations"))
    owner = meta["ownerReferences"][0]
    if (owner["kind"], owner["uid"], owner.get("controller"), owner.get("blockOwnerDeletion")) != (
            "Pod", pod["metadata"]["uid"], True, True):
        raise Fail("owner: %r" % owner)
    if claim["spec"]["devices"]["requests"][0]["name"] != "gpu":
        raise Fail("spec: %r" % claim["spec"])

    node = wait_for("the pod bound", lambda: get_json(up, ["pod", "trainer"])["spec"].get(
        "nodeName"))
    uid = pod["metadata"]["uid"]
    status = get_json(up, ["resourceclaim", name]).get("status") or {}
    if not any(r.get("uid") == uid for r in status.get("reservedFor") or []):
        # No allocating scheduler plugin: the pod waits, as the kubelet waits for its claims.
        time.sleep(1.5)  # three times the simulated kubelets' start delay
        p = get_json(up, ["pod", "trainer"])
        waiting = [c.get("state", {}).get("waiting", {}).get("reason")
                   for c in p["status"].get("containerStatuses") or []]
        if p["status"].get("phase") != "Pending" or waiting != ["ContainerCreating"]:
            raise Fail("pod with an unallocated claim: %r" % p["status"])
        allocation = {"devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node,
                                               "device": "gpu-0"}]},
                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                          "key": "metadata.name", "operator": "In", "values": [node]}]}]}}
        up.kubectl(["patch", "resourceclaim", name, "--subresource=status", "--type=merge",
                    "-p", json.dumps({"status": {
                        "allocation": allocation,
                        "reservedFor": [{"resource": "pods", "name": "trainer", "uid": uid}]}})])
    wait_for("the pod running", lambda: get_json(up, ["pod", "trainer"])["status"].get(
        "phase") == "Running", timeout=30)

    up.kubectl(["delete", "pod", "trainer", "--wait=true"])
    wait_for("the claim deleted",
             lambda: up.kubectl(["get", "resourceclaim", name], check=False)[0] != 0, timeout=30)


def check_bad_device_file_stops_the_start(up):
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.yaml")
        with open(bad, "w") as f:
            f.write("driver: d\ndevices: [{name: a, capacity: {memory: lots}}]\n")
        p = subprocess.run([up.berth, "up", "--data-dir", os.path.join(d, "data"), "--port", "0",
                            "--node-devices", bad], capture_output=True, text=True, timeout=30)
    expected = "devices[0].capacity.memory: not a quantity: lots"
    if p.returncode != 1 or expected not in p.stderr:
        raise Fail("rc %d: %s" % (p.returncode, p.stderr))


CHECKS = [check_every_node_publishes_its_slice, check_template_claim_runs_pod_and_goes_with_it,
          check_bad_device_file_stops_the_start]


def main():
    run_against_up(CHECKS, "berth-dra-cluster-e2e-", demo_nodes=DEMO_NODES,
                   extra=["--node-devices", DEVICES])


if __name__ == "__main__":
    main()
