#!/usr/bin/env python3
"""End-to-end tests of gang scheduling in `berth up`: scheduler-plugins' Coscheduling and the
podgroup controller, with the real kubectl and the official Python client
(/usr/bin/python3's python3-kubernetes).

Usage: run_gang_e2e.py BERTH [CHECK ...]

Runs, from the source tree, the commands of docs/configuration.md's "Gang scheduling in berth
up" (check_doc_runs_these_commands asserts the page has each one verbatim):

* `berth up --config examples/up/gang/coscheduling.yaml` (Coscheduling at queueSort,
  preFilter, postFilter, permit and reserve) on three 4-CPU nodes; the PodGroup CRD applied
  after the start;
* two members of a gang of three stay unbound and their PodGroup Pending; the third arrives,
  all three bind within seconds and the PodGroup is Running (`kubectl get pg` shows it, the
  Python client reads it), then Finished when the pods have run;
* a gang whose minResources exceed the cluster, and one whose members' requests fit on fewer
  nodes than minMember, leave no member bound while an ordinary pod binds;
* a PodGroup created after its pods (with the Python client): the pods bind then.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import REPO, Fail, run_against_up, wait_for, run_python_client  # noqa: E402

DOC = os.path.join(REPO, "docs", "configuration.md")
# What the how-to runs; paths are relative to the source tree, the test's working directory.
UP_ARGS = ["--config", "examples/up/gang/coscheduling.yaml", "--demo-node-cpu", "4",
           "--demo-node-memory", "16Gi"]
DEMO_NODES = 3
UP_COMMAND = "berth up --demo-nodes %d %s" % (DEMO_NODES, " ".join(UP_ARGS))
APPLY_CRD = "kubectl apply -f test/up/data/scheduling.x-k8s.io_podgroups.yaml"
WAIT_CRD = ("kubectl wait --for=condition=established --timeout=30s "
            "crd/podgroups.scheduling.x-k8s.io")
APPLY_TRAINER = "kubectl apply -f examples/up/gang/trainer.yaml"
GET_PG = "kubectl get pg trainer"
APPLY_THIRD = "kubectl apply -f examples/up/gang/trainer-2.yaml"
GET_PODS = "kubectl get pods -l scheduling.x-k8s.io/pod-group=trainer -o wide"
APPLY_TOO_BIG = "kubectl apply -f examples/up/gang/too-big.yaml"
RUN_SOLO = "kubectl run solo --image=registry.k8s.io/pause:3.10"
WAIT_FINISHED = ("kubectl wait --for=jsonpath='{.status.phase}'=Finished --timeout=60s "
                 "pg/trainer")
DOC_COMMANDS = [UP_COMMAND, APPLY_CRD, WAIT_CRD, APPLY_TRAINER, GET_PG, APPLY_THIRD, GET_PODS,
                APPLY_TOO_BIG, RUN_SOLO, WAIT_FINISHED]
LABEL = "scheduling.x-k8s.io/pod-group"


def run(up, command):
    """Runs one of the how-to's kubectl command lines as written (shell quoting included)."""
    p = subprocess.run(command, shell=True, env=up.env(), capture_output=True, text=True,
                       timeout=90, cwd=REPO)
    if p.returncode != 0:
        raise Fail("%s: rc %d: %s" % (command, p.returncode, p.stderr.strip()))
    return p.stdout


def pods(up, group):
    out = up.kubectl(["get", "pods", "-l", "%s=%s" % (LABEL, group), "-o", "json"])[1]
    return json.loads(out)["items"]


def node_names(up, group):
    return [p["spec"].get("nodeName", "") for p in pods(up, group)]


def phase(up, group):
    rc, out, _ = up.kubectl(["get", "pg", group, "-o", "jsonpath={.status.phase}"], check=False)
    return out.strip() if rc == 0 else None


def hold(what, fn, seconds=3.0):
    """Asserts `fn` stays true for `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not fn():
            raise Fail("no longer true: " + what)
        time.sleep(0.2)


def pod_json(name, group, cpu):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {LABEL: group}},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "worker", "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}


def create(up, objs):
    up.kubectl(["create", "-f", "-"], stdin="\n".join(json.dumps(o) for o in objs))


def python_client(up, script):
    out = run_python_client(up, PY_PRELUDE + script)
    if "ok" not in out:
        raise Fail("python client: " + out[-2000:])
    return out


PY_PRELUDE = r'''
import sys, time
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
pg_api = client.CustomObjectsApi()
core = client.CoreV1Api()
G, V, P = "scheduling.x-k8s.io", "v1alpha1", "podgroups"
def wait(what, fn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if fn():
            return
        time.sleep(0.2)
    raise AssertionError("timed out: " + what)
'''

# ---------------------------------------------------------------- checks


def check_doc_runs_these_commands(up):
    doc = open(DOC).read()
    missing = [c for c in DOC_COMMANDS if c not in doc]
    if missing:
        raise Fail("docs/configuration.md lacks: %s" % missing)
    config = open(os.path.join(REPO, "examples/up/gang/coscheduling.yaml")).read()
    body = "\n".join(line for line in config.splitlines() if not line.startswith("#"))
    if body.strip() not in doc:
        raise Fail("docs/configuration.md does not show examples/up/gang/coscheduling.yaml")


def check_controller_idle_without_crd(up):
    # The scheduler and the podgroup controller start before the CRD exists: nothing alarming.
    time.sleep(1)
    up.log.flush()
    log = open(os.path.join(up.data_dir, "up.log")).read()
    for word in ("podgroup", "PodGroup"):
        lines = [line for line in log.splitlines() if word in line]
        if lines:
            raise Fail("log mentions %s before the CRD exists: %s" % (word, lines[:3]))
    run(up, APPLY_CRD)
    run(up, WAIT_CRD)


def check_gang_waits_for_its_last_member(up):
    run(up, APPLY_TRAINER)
    wait_for("trainer Pending", lambda: phase(up, "trainer") == "Pending", timeout=30)
    hold("two of three members unbound, PodGroup Pending",
         lambda: node_names(up, "trainer") == ["", ""] and phase(up, "trainer") == "Pending")
    out = run(up, GET_PG).splitlines()
    if out[0].split()[:2] != ["NAME", "PHASE"] or out[1].split()[:3] != ["trainer", "Pending",
                                                                         "3"]:
        raise Fail("kubectl get pg: %s" % out)
    run(up, APPLY_THIRD)
    t = time.time()
    wait_for("three members bound", lambda: all(node_names(up, "trainer")) and
             len(node_names(up, "trainer")) == 3, timeout=10)
    bound_after = time.time() - t
    wait_for("trainer Running", lambda: phase(up, "trainer") == "Running", timeout=10)
    out = run(up, GET_PG).splitlines()
    row = out[1].split()
    if row[:4] != ["trainer", "Running", "3", "3"]:
        raise Fail("kubectl get pg: %s" % out)
    if run(up, GET_PODS).count("Running") != 3:
        raise Fail("kubectl get pods: %s" % run(up, GET_PODS))
    python_client(up, r'''
pg = pg_api.get_namespaced_custom_object_status(G, V, "default", P, "trainer")
assert pg["status"]["phase"] in ("Running", "Finished"), pg["status"]
assert pg["status"].get("running", 0) + pg["status"].get("succeeded", 0) == 3, pg["status"]
pods = core.list_namespaced_pod("default", label_selector="scheduling.x-k8s.io/pod-group=trainer")
assert len({p.spec.node_name for p in pods.items}) >= 1 and all(p.spec.node_name for p in pods.items)
print("ok")
''')
    print("  (bound %.1fs after the third member)" % bound_after)


def check_gangs_that_cannot_fit(up):
    run(up, APPLY_TOO_BIG)
    # Four members of 3 CPU each: one fits on each of the three 4-CPU nodes, never four.
    create(up, [{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": "wide"}, "spec": {"minMember": 4}}] +
           [pod_json("wide-%d" % i, "wide", "3") for i in range(4)])
    run(up, RUN_SOLO)
    wait_for("the ordinary pod bound", lambda: json.loads(up.kubectl(
        ["get", "pod", "solo", "-o", "json"])[1])["spec"].get("nodeName"), timeout=15)
    hold("no member of too-big or wide bound",
         lambda: not any(node_names(up, "too-big")) and not any(node_names(up, "wide")),
         seconds=5)
    for group in ("too-big", "wide"):
        if phase(up, group) != "Scheduling":
            raise Fail("%s: phase %s" % (group, phase(up, group)))
    up.kubectl(["delete", "pods", "-l", "%s in (too-big,wide)" % LABEL, "--wait"])
    up.kubectl(["delete", "pod", "solo", "--wait"])


def check_podgroup_created_after_its_pods(up):
    create(up, [pod_json("late-%d" % i, "late", "500m") for i in range(2)])
    hold("members without their PodGroup unbound",
         lambda: node_names(up, "late") == ["", ""])
    python_client(up, r'''
body = {"apiVersion": G + "/" + V, "kind": "PodGroup", "metadata": {"name": "late"},
        "spec": {"minMember": 2}}
pg_api.create_namespaced_custom_object(G, V, "default", P, body)
def bound():
    items = core.list_namespaced_pod(
        "default", label_selector="scheduling.x-k8s.io/pod-group=late").items
    return len(items) == 2 and all(p.spec.node_name for p in items)
wait("late members bound", bound, timeout=15)
wait("late Running", lambda: pg_api.get_namespaced_custom_object(
    G, V, "default", P, "late").get("status", {}).get("phase") == "Running")
print("ok")
''')


def check_finished_gang(up):
    run(up, WAIT_FINISHED)
    pg = json.loads(up.kubectl(["get", "pg", "trainer", "-o", "json"])[1])
    if pg["status"].get("succeeded") != 3 or "running" in pg["status"]:
        raise Fail("trainer status: %s" % pg["status"])
    if [p["status"]["phase"] for p in pods(up, "trainer")] != ["Succeeded"] * 3:
        raise Fail("trainer pods: %s" % [p["status"] for p in pods(up, "trainer")])


CHECKS = [check_doc_runs_these_commands, check_controller_idle_without_crd,
          check_gang_waits_for_its_last_member, check_gangs_that_cannot_fit,
          check_podgroup_created_after_its_pods, check_finished_gang]


def main():
    # The how-to's paths are relative to the source tree.
    os.chdir(REPO)
    run_against_up(CHECKS, "berth-gang-e2e-", demo_nodes=DEMO_NODES, extra=UP_ARGS)


if __name__ == "__main__":
    main()
