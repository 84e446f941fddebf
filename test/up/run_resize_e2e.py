#!/usr/bin/env python3
"""End-to-end tests of in-place pod resize in `berth up`, with the real kubectl and the official
Python client.

Usage: run_resize_e2e.py BERTH [CHECK ...]

* `kubectl patch --subresource resize` raises a running pod's cpu request: the simulated
  kubelet reports it actuated (allocatedResources, resources) and the scheduler counts the new
  request, so a pod that fitted beside the old one stays Pending beside the new one;
* a resize larger than the node is reported PodResizePending/Infeasible and the old request
  stays actuated; withdrawing the resize clears the condition (a resize that waits for room,
  Deferred, is covered by the simulated kubelets' unit test);
* kube-apiserver's refusals come back through kubectl (QoS class change, requests removed);
* the Python client reads the actuated resources and resizes through the subresource too.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for, run_python_client  # noqa: E402

NODE = "demo-node-001"


def get_pod(up, name):
    return json.loads(up.kubectl(["get", "pod", name, "-o", "json"])[1])


def create_pod(up, name, cpu, node=NODE):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                    "containers": [{"name": "c", "image": "nginx",
                                    "resources": {"requests": {"cpu": cpu}}}]}}
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(pod))


def running(up, name):
    return wait_for("pod %s Running" % name,
                    lambda: get_pod(up, name)["status"].get("phase") == "Running" or None)


def resize(up, name, cpu, check=True):
    patch = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}
    return up.kubectl(["patch", "pod", name, "--subresource", "resize", "--patch",
                       json.dumps(patch)], check=check)


def allocated_cpu(up, name):
    statuses = get_pod(up, name)["status"].get("containerStatuses") or [{}]
    return statuses[0].get("allocatedResources", {}).get("cpu")


def pending(up, name):
    for c in get_pod(up, name)["status"].get("conditions", []):
        if c["type"] == "PodResizePending":
            return c
    return None


def milli(cpu):
    return int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000


def node_cpu(up):
    node = json.loads(up.kubectl(["get", "node", NODE, "-o", "json"])[1])
    return milli(node["status"]["allocatable"]["cpu"])


def check_resize_is_actuated_and_scheduled_against(up):
    create_pod(up, "grow", "500m")
    running(up, "grow")
    status = get_pod(up, "grow")["status"]["containerStatuses"][0]
    if status.get("resources") != {"requests": {"cpu": "500m"}}:
        raise Fail("running container reports %r" % status.get("resources"))
    resize(up, "grow", "1500m")
    wait_for("resize actuated", lambda: allocated_cpu(up, "grow") == "1500m" or None)
    if get_pod(up, "grow")["spec"]["containers"][0]["resources"]["requests"]["cpu"] != "1500m":
        raise Fail("spec not resized")
    # What is left on the node after the resized pod, plus one millicpu, does not fit.
    on_node = json.loads(up.kubectl(["get", "pods", "-A", "-o", "json", "--field-selector",
                                     "spec.nodeName=" + NODE])[1])["items"]
    used = sum(milli(c["resources"].get("requests", {}).get("cpu", "0"))
               for p in on_node for c in p["spec"]["containers"])
    left = node_cpu(up) - used
    create_pod(up, "squeezed", "%dm" % (left + 1))
    wait_for("squeezed unschedulable", lambda: any(
        c["type"] == "PodScheduled" and c["status"] == "False"
        for c in get_pod(up, "squeezed")["status"].get("conditions", [])) or None)
    create_pod(up, "fits", "%dm" % left)
    running(up, "fits")
    for name in ("squeezed", "fits"):
        up.kubectl(["delete", "pod", name, "--wait=false"])


def check_infeasible_then_withdrawn(up):
    create_pod(up, "big", "100m")
    running(up, "big")
    resize(up, "big", "100000")
    c = wait_for("Infeasible", lambda: pending(up, "big"))
    if c.get("reason") != "Infeasible" or "Node didn't have enough capacity: cpu" not in c["message"]:
        raise Fail("condition %r" % c)
    if allocated_cpu(up, "big") != "100m":
        raise Fail("an infeasible resize was actuated")
    # Asking for what runs already withdraws the resize.
    resize(up, "big", "100m")
    wait_for("pending cleared", lambda: pending(up, "big") is None or None)


def check_refusals_come_back_through_kubectl(up):
    create_pod(up, "strict", "200m")
    running(up, "strict")
    patch = {"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "200m", "memory": "64Mi"},
        "limits": {"cpu": "200m", "memory": "64Mi"}}}]}}
    rc, _, err = up.kubectl(["patch", "pod", "strict", "--subresource", "resize", "--patch",
                             json.dumps(patch)], check=False)
    if rc == 0 or "Pod QOS Class may not change as a result of resizing" not in err:
        raise Fail("QoS change: rc %d, %s" % (rc, err))
    rc, _, err = up.kubectl(["patch", "pod", "strict", "--subresource", "resize", "--type",
                             "json", "-p", '[{"op":"remove","path":'
                             '"/spec/containers/0/resources/requests"}]'], check=False)
    if rc == 0 or "resource requests cannot be removed" not in err:
        raise Fail("requests removed: rc %d, %s" % (rc, err))


def check_python_client(up):
    create_pod(up, "py", "300m")
    running(up, "py")
    script = r'''
import json, sys, time
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
api = core.api_client
body = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "700m"}}}]}}
api.call_api("/api/v1/namespaces/default/pods/py/resize", "PATCH", body=body,
             header_params={"Content-Type": "application/strategic-merge-patch+json"},
             auth_settings=["BearerToken"], _preload_content=False)
deadline = time.time() + 30
while time.time() < deadline:
    raw = core.read_namespaced_pod("py", "default", _preload_content=False).data
    pod = json.loads(raw)
    if pod["status"]["containerStatuses"][0].get("allocatedResources", {}).get("cpu") == "700m":
        print("ok")
        break
    time.sleep(0.2)
'''
    if "ok" not in run_python_client(up, script):
        raise Fail("the resize was not seen actuated through the Python client")


CHECKS = [check_resize_is_actuated_and_scheduled_against, check_infeasible_then_withdrawn,
          check_refusals_come_back_through_kubectl, check_python_client]


if __name__ == "__main__":
    run_against_up(CHECKS, "berth-resize-e2e-", demo_nodes=2)
