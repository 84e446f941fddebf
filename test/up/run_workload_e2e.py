#!/usr/bin/env python3
"""End-to-end tests of the pod group cycle in `berth up --feature-gates
GenericWorkload=true,GangScheduling=true`, with the real kubectl and the official Python client
(/usr/bin/python3's python3-kubernetes).

Usage: run_workload_e2e.py BERTH [CHECK ...]

With the GenericWorkload gate `berth up` serves scheduling.k8s.io/v1beta1 Workload and PodGroup as
built-in kinds. On three 4-CPU nodes, with GangScheduling in the default profile through the gates:

* `kubectl api-resources` lists both kinds, `kubectl get podgroups` reads them, and a PodGroup
  with minCount 0 is refused with the field named;
* a gang of four 1-CPU pods with minCount 4 binds whole, its members spread over the nodes;
* a gang of four 3-CPU pods (one fits per node) leaves every member unbound while an ordinary
  pod binds, and `kubectl describe pod` shows each member's reason (the placed ones
  `minCount (4) cannot be satisfied: 3 scheduled, 0 remaining`);
* a PodGroup created with the Python client after its pods: the pods bind then.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import REPO, Fail, run_against_up, wait_for, run_python_client  # noqa: E402

UP_ARGS = ["--feature-gates", "GenericWorkload=true,GangScheduling=true", "--demo-node-cpu", "4",
           "--demo-node-memory", "16Gi"]
DEMO_NODES = 3
GV = "scheduling.k8s.io/v1beta1"


def pod_json(name, group, cpu):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"gang": group}},
            "spec": {"restartPolicy": "Never",
                     "schedulingGroup": {"podGroupName": group},
                     "containers": [{
                         "name": "worker", "image": "registry.k8s.io/pause:3.10",
                         "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}


def pod_group(name, min_count):
    return {"apiVersion": GV, "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def create(up, objs):
    up.kubectl(["create", "-f", "-"], stdin="\n".join(json.dumps(o) for o in objs))


def pods(up, group):
    out = up.kubectl(["get", "pods", "-l", "gang=%s" % group, "-o", "json"])[1]
    return json.loads(out)["items"]


def node_names(up, group):
    return [p["spec"].get("nodeName", "") for p in pods(up, group)]


def hold(what, fn, seconds=3.0):
    """Asserts `fn` stays true for `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not fn():
            raise Fail("no longer true: " + what)
        time.sleep(0.2)


# ---------------------------------------------------------------- checks


def check_builtin_kinds_served(up):
    out = up.kubectl(["api-resources", "--api-group=scheduling.k8s.io", "-o", "name"])[1]
    for name in ("podgroups.scheduling.k8s.io", "workloads.scheduling.k8s.io",
                 "priorityclasses.scheduling.k8s.io"):
        if name not in out.split():
            raise Fail("kubectl api-resources lacks %s:\n%s" % (name, out))
    crds = up.kubectl(["get", "crd", "-o", "name"])[1]
    if "scheduling.k8s.io" in crds:
        raise Fail("built-in kinds listed as CRDs: " + crds)
    workload = {"apiVersion": GV, "kind": "Workload", "metadata": {"name": "train"},
                "spec": {"podGroupTemplates": [
                    {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}}]}}
    create(up, [workload])
    got = json.loads(up.kubectl(["get", "workloads.scheduling.k8s.io", "train", "-o", "json"])[1])
    if got["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] != 4:
        raise Fail("workload read back: %s" % got)
    code, out, err = up.kubectl(["create", "-f", "-"], stdin=json.dumps(pod_group("bad", 0)),
                                check=False)
    if code == 0 or "spec.schedulingPolicy.gang.minCount" not in err:
        raise Fail("minCount 0 not refused with the field named: %s %s" % (out, err))


def check_gang_that_fits_binds_whole(up):
    create(up, [pod_group("fits", 4)] + [pod_json("fits-%d" % i, "fits", "1") for i in range(4)])
    wait_for("four members bound", lambda: len(node_names(up, "fits")) == 4 and
             all(node_names(up, "fits")), timeout=20)
    if len(set(node_names(up, "fits"))) < 2:
        raise Fail("members not spread: %s" % node_names(up, "fits"))


def check_gang_that_cannot_fit_binds_nobody(up):
    # One 3-CPU member fits on each 4-CPU node (the earlier gang holds a CPU or two), never four.
    create(up, [pod_group("wide", 4)] + [pod_json("wide-%d" % i, "wide", "3") for i in range(4)])
    up.kubectl(["run", "solo", "--image=registry.k8s.io/pause:3.10"])
    wait_for("the ordinary pod bound", lambda: json.loads(up.kubectl(
        ["get", "pod", "solo", "-o", "json"])[1])["spec"].get("nodeName"), timeout=15)
    hold("no member of wide bound", lambda: not any(node_names(up, "wide")), seconds=4)
    reasons = {}
    for i in range(4):
        out = up.kubectl(["describe", "pod", "wide-%d" % i])[1]
        reasons[i] = out
        if "FailedScheduling" not in out:
            raise Fail("kubectl describe pod wide-%d: no FailedScheduling event:\n%s" % (i, out))
    placed = [i for i in reasons if "cannot be satisfied" in reasons[i]]
    if not placed:
        raise Fail("no member shows the gang's reason:\n%s" % reasons[0])
    if not any("minCount (4) cannot be satisfied" in reasons[i] for i in placed):
        raise Fail("unexpected reason:\n%s" % reasons[placed[0]])
    up.kubectl(["delete", "pods", "-l", "gang=wide", "--wait"])
    up.kubectl(["delete", "pod", "solo", "--wait"])


def check_podgroup_created_after_its_pods(up):
    create(up, [pod_json("late-%d" % i, "late", "500m") for i in range(2)])
    hold("members without their PodGroup unbound", lambda: node_names(up, "late") == ["", ""])
    out = run_python_client(up, r'''
import sys, time
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
api = client.CustomObjectsApi()
core = client.CoreV1Api()
body = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "late"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
api.create_namespaced_custom_object("scheduling.k8s.io", "v1beta1", "default", "podgroups", body)
deadline = time.time() + 20
while time.time() < deadline:
    items = core.list_namespaced_pod("default", label_selector="gang=late").items
    if len(items) == 2 and all(p.spec.node_name for p in items):
        print("ok")
        break
    time.sleep(0.2)
else:
    print("late members not bound")
''')
    if "ok" not in out:
        raise Fail("python client: " + out[-2000:])


CHECKS = [check_builtin_kinds_served, check_gang_that_fits_binds_whole,
          check_gang_that_cannot_fit_binds_nobody, check_podgroup_created_after_its_pods]


def main():
    run_against_up(CHECKS, "berth-workload-e2e-", demo_nodes=DEMO_NODES, extra=UP_ARGS)


if __name__ == "__main__":
    main()
