#!/usr/bin/env python3
"""End-to-end tests of `berth up` with the real kubectl and the official Python client.

Usage: run_up_e2e.py BERTH [CHECK ...]

Starts `berth up` on an ephemeral port with a temporary data directory and demo nodes, then
runs each check (all by default) against it with /usr/bin/kubectl (KUBECONFIG pointing at the
kubeconfig `berth up` wrote) and python3-kubernetes. Prints one line per check and a final
"N passed, M failed" line; exits non-zero on failure.
"""
import json
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import protobuf_bodies

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class Fail(Exception):
    pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Up:
    """A running `berth up` process."""

    def __init__(self, berth, data_dir, demo_nodes=4, extra=()):
        self.berth, self.data_dir = berth, data_dir
        self.port = free_port()
        self.log = open(os.path.join(data_dir, "up.log"), "a")
        self.proc = subprocess.Popen(
            [berth, "up", "--data-dir", data_dir, "--port", str(self.port),
             "--demo-nodes", str(demo_nodes)] + list(extra),
            stdout=self.log, stderr=subprocess.STDOUT)
        self.kubeconfig = os.path.join(data_dir, "kubeconfig")
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise Fail("berth up exited with %d: %s" % (self.proc.returncode, self.tail()))
            if os.path.exists(self.kubeconfig):
                rc, out, _ = self.kubectl(["get", "--raw", "/readyz"], check=False)
                if rc == 0 and out.strip() == "ok":
                    return
            time.sleep(0.2)
        raise Fail("berth up not ready after 60 s: " + self.tail())

    def tail(self):
        self.log.flush()
        with open(os.path.join(self.data_dir, "up.log")) as f:
            return f.read()[-3000:]

    def env(self):
        e = dict(os.environ)
        e["KUBECONFIG"] = self.kubeconfig
        return e

    def kubectl(self, args, check=True, stdin=None, timeout=60):
        p = subprocess.run([KUBECTL] + args, env=self.env(), input=stdin, capture_output=True,
                           text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Fail("kubectl %s: rc %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
        return p.returncode, p.stdout, p.stderr

    def stop(self, sig=signal.SIGINT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def wait_for(what, fn, timeout=60, interval=0.2):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise Fail("timed out waiting for %s (last: %r)" % (what, last))


def run_python_client(up, script, *args, timeout=120):
    """Runs `script` with the official Python client (/usr/bin/python3, Debian's
    python3-kubernetes), sys.argv[1] the cluster's kubeconfig and `args` after it; returns its
    output. A non-zero exit is a Fail that shows what it printed."""
    p = subprocess.run(["/usr/bin/python3", "-c", script, up.kubeconfig] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Fail("python client: rc %d: %s %s" % (p.returncode, p.stdout[-2000:],
                                                   p.stderr[-2000:]))
    return p.stdout


def pods_json(up, ns="default", selector=None):
    args = ["get", "pods", "-n", ns, "-o", "json"]
    if selector:
        args += ["-l", selector]
    return json.loads(up.kubectl(args)[1])["items"]


def pod_manifest(name, cpu="100m", memory="64Mi", scheduler=None, labels=None, extra_spec=None):
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    spec.update(extra_spec or {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {"app": "e2e"}}, "spec": spec}


def create(up, objs):
    # A stream of JSON documents (check_list_manifests covers `kind: List`).
    up.kubectl(["create", "-f", "-"], stdin="\n".join(json.dumps(o) for o in objs))


# ---------------------------------------------------------------- checks

def check_nodes_ready(up):
    out = up.kubectl(["get", "nodes"])[1]
    lines = out.strip().splitlines()
    if len(lines) != 5 or "Ready" not in lines[1]:
        raise Fail("expected 4 Ready demo nodes:\n" + out)


def check_batch_bound(up):
    create(up, [pod_manifest("batch-%03d" % i, labels={"app": "batch"}) for i in range(200)])

    def all_bound():
        pods = pods_json(up, selector="app=batch")
        return len(pods) == 200 and all(p["spec"].get("nodeName") for p in pods)

    wait_for("200 pods bound", all_bound, timeout=120)
    out = up.kubectl(["get", "pods", "-o", "wide", "-l", "app=batch"])[1]
    rows = out.strip().splitlines()[1:]
    if len(rows) != 200 or any("demo-node-" not in r for r in rows):
        raise Fail("get -o wide does not show every pod on a demo node:\n" + out[:2000])
    nodes = {p["spec"]["nodeName"] for p in pods_json(up, selector="app=batch")}
    if len(nodes) < 4:
        raise Fail("200 small pods should spread over all 4 nodes, got %s" % sorted(nodes))
    # The kubelets confirm the deletions after the (capped) grace period; waiting for them
    # keeps the deletions from reaching the next check's pods.
    up.kubectl(["delete", "pods", "-l", "app=batch", "--timeout=60s"])


def check_unschedulable_then_bound(up):
    create(up, [pod_manifest("huge", cpu="30")])

    def failed():
        p = json.loads(up.kubectl(["get", "pod", "huge", "-o", "json"])[1])
        conds = {c["type"]: c for c in p.get("status", {}).get("conditions", [])}
        c = conds.get("PodScheduled")
        return c if c and c["status"] == "False" else None

    cond = wait_for("PodScheduled=False on huge", failed)
    if cond.get("reason") != "Unschedulable" or "Insufficient cpu" not in cond.get("message", ""):
        raise Fail("unexpected condition %r" % cond)
    out = wait_for("FailedScheduling in describe", lambda: (
        lambda o: o if "FailedScheduling" in o else None)(
            up.kubectl(["describe", "pod", "huge"])[1]))
    if "0/4 nodes are available" not in out:
        raise Fail("describe lacks the FitError message:\n" + out)

    def failed_events():
        ev = json.loads(up.kubectl(["get", "events", "--field-selector",
                                    "involvedObject.name=huge,reason=FailedScheduling",
                                    "-o", "json"])[1])["items"]
        return len(ev)

    # Changes that cannot help a pod short of CPU do not send it round again.
    before = failed_events()
    up.kubectl(["annotate", "node", "demo-node-002", "heartbeat=1"])
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
           "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}}
    create(up, [pvc])
    time.sleep(2)
    if failed_events() != before:
        raise Fail("unrelated changes retried the unschedulable pod (%d -> %d FailedScheduling)"
                   % (before, failed_events()))
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "big-node", "labels": {"kubernetes.io/hostname": "big-node"}},
            "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                       "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    create(up, [node])
    wait_for("huge bound to big-node", lambda: json.loads(
        up.kubectl(["get", "pod", "huge", "-o", "json"])[1])["spec"].get("nodeName") == "big-node")


def check_other_scheduler_left_alone(up):
    create(up, [pod_manifest("mine", scheduler="my-scheduler")])
    time.sleep(2)
    p = json.loads(up.kubectl(["get", "pod", "mine", "-o", "json"])[1])
    if p["spec"].get("nodeName"):
        raise Fail("pod of my-scheduler was bound by Berth to %s" % p["spec"]["nodeName"])
    # The shell scheduler of the tutorials, through kubectl proxy, binds it.
    port = free_port()
    proxy = subprocess.Popen([KUBECTL, "proxy", "--port", str(port)], env=up.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for("kubectl proxy", lambda: subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "http://127.0.0.1:%d/api" % port]).returncode == 0,
            timeout=20)
        script = (
            "for P in $(kubectl get pods -o json | jq -r '.items[] | "
            "select(.spec.schedulerName == \"my-scheduler\") | select(.spec.nodeName == null) | "
            ".metadata.name'); do "
            "curl -s -f -H 'Content-Type: application/json' -X POST "
            "--data '{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"'$P'\"},"
            "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"demo-node-002\"}}' "
            "http://127.0.0.1:%d/api/v1/namespaces/default/pods/$P/binding/ >/dev/null || exit 1; "
            "done" % port)
        p = subprocess.run(["bash", "-c", script], env=up.env(), capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            raise Fail("shell scheduler failed: " + p.stdout + p.stderr)
    finally:
        proxy.terminate()
        proxy.wait()
    node = json.loads(up.kubectl(["get", "pod", "mine", "-o", "json"])[1])["spec"].get("nodeName")
    if node != "demo-node-002":
        raise Fail("shell scheduler's binding not applied: node %r" % node)


def check_kubectl_verbs(up):
    manifest = os.path.join(up.data_dir, "cm.yaml")
    with open(manifest, "w") as f:
        f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n")
    up.kubectl(["apply", "-f", manifest])
    with open(manifest, "w") as f:
        f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"2\"\n")
    up.kubectl(["apply", "-f", manifest])
    got = json.loads(up.kubectl(["get", "cm", "settings", "-o", "json"])[1])
    if got["data"] != {"a": "2"}:
        raise Fail("apply update not applied: %r" % got["data"])
    up.kubectl(["apply", "--server-side", "-f", manifest])
    up.kubectl(["label", "node", "demo-node-001", "team=blue"])
    up.kubectl(["annotate", "node", "demo-node-001", "note=hello"])
    up.kubectl(["taint", "node", "demo-node-003", "dedicated=gpu:NoSchedule"])
    up.kubectl(["cordon", "demo-node-004"])
    n = json.loads(up.kubectl(["get", "node", "demo-node-004", "-o", "json"])[1])
    if not n["spec"].get("unschedulable"):
        raise Fail("cordon did not set spec.unschedulable")
    up.kubectl(["uncordon", "demo-node-004"])
    up.kubectl(["taint", "node", "demo-node-003", "dedicated=gpu:NoSchedule-"])
    out = up.kubectl(["get", "node", "demo-node-001", "-o", "yaml"])[1]
    if "team: blue" not in out or "note: hello" not in out:
        raise Fail("label/annotate not visible in -o yaml")
    up.kubectl(["apply", "-f", os.path.join(REPO, "deploy")])
    up.kubectl(["delete", "cm", "settings"])
    rc, _, err = up.kubectl(["get", "cm", "settings"], check=False)
    if rc == 0 or "NotFound" not in err:
        raise Fail("deleted configmap still there: " + err)


def check_list_manifests(up):
    """`kind: List` files with kubectl's default (strict) validation: kubectl validates a List
    against OpenAPI v2 (protobuf) before splitting it; create, apply, apply again."""
    def write(name, items):
        path = os.path.join(up.data_dir, name)
        with open(path, "w") as f:
            f.write(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        return path

    def cm(name, value):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                "data": {"k": value}}

    pod = pod_manifest("list-pod", scheduler="nobody")
    up.kubectl(["create", "-f", write("list1.json", [cm("list-a", "1"), pod])])
    got = json.loads(up.kubectl(["get", "cm", "list-a", "-o", "json"])[1])
    if got["data"] != {"k": "1"}:
        raise Fail("kind: List create: %r" % got["data"])
    up.kubectl(["get", "pod", "list-pod"])
    # YAML, through apply: one object updated, one created.
    path = os.path.join(up.data_dir, "list2.yaml")
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: List\nitems:\n"
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: list-a\n"
                "  data:\n    k: \"2\"\n"
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: list-b\n"
                "  data:\n    k: \"3\"\n")
    for _ in range(2):
        up.kubectl(["apply", "-f", path])
        a = json.loads(up.kubectl(["get", "cm", "list-a", "-o", "json"])[1])["data"]
        b = json.loads(up.kubectl(["get", "cm", "list-b", "-o", "json"])[1])["data"]
        if a != {"k": "2"} or b != {"k": "3"}:
            raise Fail("kind: List apply: %r %r" % (a, b))
    up.kubectl(["apply", "--server-side", "-f", path])
    up.kubectl(["delete", "-f", path])
    up.kubectl(["delete", "pod", "list-pod", "--wait=false"])


def check_kubectl_explain(up):
    """kubectl explain reads the schemas of /openapi/v3 (and of /openapi/v2 when asked):
    fields, their types and Berth's descriptions."""
    def explain(args, wants):
        out = up.kubectl(["explain"] + args)[1]
        flat = " ".join(out.split())  # descriptions are wrapped to the terminal's width
        for want in wants:
            if want not in out and " ".join(want.split()) not in flat:
                raise Fail("explain %s lacks %r:\n%s" % (" ".join(args), want, out[:3000]))

    explain(["pod.spec.containers"],
            ["KIND: Pod", "FIELD: containers <[]Container>", "image\t<string>",
             "The container image to run.", "resources\t<ResourceRequirements>",
             "name\t<string> -required-", "The containers of the pod."])
    explain(["pod"], ["deployable unit", "spec\t<PodSpec>"])
    explain(["deployment.spec"], ["GROUP: apps", "replicas\t<integer>", "How many pods to run",
                                  "template\t<PodTemplateSpec> -required-"])
    explain(["deployment.spec", "--recursive"],
            ["nodeSelector\t<map[string]string>", "containerPort\t<integer>"])
    explain(["nodes.status"], ["allocatable\t<map[string]Quantity>", "capacity minus"])
    explain(["pod.spec.tolerations", "--output", "plaintext-openapiv2"],
            ["tolerationSeconds\t<integer>", "with a matching taint"])
    rc, _, err = up.kubectl(["explain", "pod.spec.nosuchfield"], check=False)
    if rc == 0 or "nosuchfield" not in err:
        raise Fail("explain of a missing field: rc %d %r" % (rc, err))


def check_metrics(up):
    """/metrics: the scheduler's metrics and the API server's, after a pod is scheduled."""
    create(up, [pod_manifest("metered")])
    wait_for("metered bound", lambda: json.loads(
        up.kubectl(["get", "pod", "metered", "-o", "json"])[1])["spec"].get("nodeName"))
    out = up.kubectl(["get", "--raw", "/metrics"])[1]
    attempts = re.search(r'^scheduler_schedule_attempts_total\{[^}]*result="scheduled"[^}]*\} '
                         r'(\d+)', out, re.M)
    if not attempts or int(attempts.group(1)) < 1:
        raise Fail("no scheduled attempt in /metrics:\n" + out[:3000])
    for pattern in (r'^apiserver_request_total\{verb="POST",[^}]*resource="pods",'
                    r'subresource="binding",[^}]*code="201"\} \d+',
                    r'^apiserver_request_total\{verb="POST",[^}]*resource="pods",'
                    r'subresource="",scope="namespace",[^}]*code="201"\} \d+',
                    r'^apiserver_storage_objects\{resource="nodes"\} 4$',
                    r'^# TYPE scheduler_pending_pods gauge$'):
        if not re.search(pattern, out, re.M):
            raise Fail("/metrics lacks %s:\n%s" % (pattern, out[:3000]))
    # The controllers (node lifecycle, garbage collector) watch Leases in process, reading the
    # server's store: no list or watch of them reaches the HTTP API.
    served = re.findall(r'^apiserver_request_total\{verb="(?:LIST|WATCH)",[^}]*resource="leases"'
                        r'[^}]*\} \d+', out, re.M)
    if served:
        raise Fail("Leases listed or watched over HTTP: %s" % served)
    up.kubectl(["delete", "pod", "metered", "--wait=false"])


def check_server_side_apply_managers(up):
    """managedFields as kube-apiserver records them, conflicts between field managers."""
    path = os.path.join(up.data_dir, "ssa.yaml")

    def apply(manager, value, label=True, force=False, check=True):
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n" +
                    ("  labels:\n    team: blue\n" if label else "") +
                    "data:\n  a: \"%s\"\n" % value)
        args = ["apply", "--server-side", "--field-manager", manager, "-f", path]
        return up.kubectl(args + (["--force-conflicts"] if force else []), check=check)

    def managers():
        obj = json.loads(up.kubectl(["get", "cm", "ssa", "-o", "json",
                                     "--show-managed-fields"])[1])
        return obj, {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}

    apply("alice", "1")
    obj, m = managers()
    e = m.get(("alice", "Apply"))
    if not e or e.get("fieldsType") != "FieldsV1" or not e.get("time") or e["apiVersion"] != "v1":
        raise Fail("no Apply entry for alice: %r" % obj["metadata"].get("managedFields"))
    if e["fieldsV1"] != {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:team": {}}}}:
        raise Fail("alice's fields: %r" % e["fieldsV1"])
    # Plain output hides them, as kubectl does.
    if "managedFields" in up.kubectl(["get", "cm", "ssa", "-o", "yaml"])[1]:
        raise Fail("managedFields shown without --show-managed-fields")

    rc, _, err = apply("bob", "2", label=False, check=False)
    if rc == 0 or 'conflict with "alice"' not in err or ".data.a" not in err:
        raise Fail("bob changing alice's field did not conflict: rc %d %s" % (rc, err))
    apply("bob", "1", label=False)  # the same value: shared
    obj, m = managers()
    if ("bob", "Apply") not in m or ("alice", "Apply") not in m:
        raise Fail("shared field not owned by both: %r" % sorted(m))
    apply("bob", "2", label=False, force=True)
    obj, m = managers()
    if obj["data"]["a"] != "2" or "f:data" in m[("alice", "Apply")]["fieldsV1"]:
        raise Fail("forced apply did not take .data.a over: %r %r" % (obj["data"], m))
    # alice stops applying the label: nobody else owns it, so it goes.
    rc, _, err = apply("alice", "1", label=False, check=False)
    if rc == 0 or 'conflict with "bob"' not in err:
        raise Fail("alice changing bob's field did not conflict: %s" % err)
    apply("alice", "2", label=False)
    obj, m = managers()
    if obj["metadata"].get("labels"):
        raise Fail("label alice no longer applies was kept: %r" % obj["metadata"])
    # An update (kubectl label) takes a field over; the next apply of it conflicts with it.
    apply("alice", "2")
    up.kubectl(["label", "--overwrite", "cm", "ssa", "team=red"])
    obj, m = managers()
    if ("kubectl-label", "Update") not in m:
        raise Fail("kubectl label not recorded: %r" % sorted(m))
    rc, _, err = apply("alice", "2", check=False)
    if rc == 0 or 'conflict with "kubectl-label" using v1' not in err:
        raise Fail("apply over kubectl label's field did not conflict: %s" % err)
    up.kubectl(["delete", "cm", "ssa"])


def check_watch(up):
    p = subprocess.Popen([KUBECTL, "get", "pods", "-w", "--output-watch-events"], env=up.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1)
        create(up, [pod_manifest("watched")])
        deadline = time.time() + 30
        seen = ""
        os.set_blocking(p.stdout.fileno(), False)
        while time.time() < deadline and "watched" not in seen:
            chunk = p.stdout.read()
            if chunk:
                seen += chunk
            time.sleep(0.1)
        if "watched" not in seen:
            raise Fail("kubectl get -w did not show the new pod: %r" % seen)
    finally:
        p.terminate()
        p.wait()


def check_bad_input(up):
    rc, _, err = up.kubectl(["create", "-f", "-"], check=False, stdin="{not json")
    if rc == 0:
        raise Fail("malformed manifest accepted")
    rc, _, err = up.kubectl(["get", "widgets"], check=False)
    if rc == 0 or "the server doesn't have a resource type" not in err:
        raise Fail("unknown resource: " + err)
    bad = pod_manifest("badq", cpu="1x")
    rc, _, err = up.kubectl(["create", "-f", "-"], check=False, stdin=json.dumps(bad))
    if rc == 0 or "quantities must match the regular expression" not in err:
        raise Fail("bad quantity not rejected as a decode error: " + err)


POISON_CHECK = """
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
for pod in v1.list_namespaced_pod("default").items[:1]:
    try:
        v1.patch_namespaced_pod_status(pod.metadata.name, "default",
                                       {"status": {"containerStatuses": "x"}})
        sys.exit("a pod status of the wrong type was accepted")
    except ApiException as e:
        if e.status != 422:
            sys.exit("pod status of the wrong type: %d %s" % (e.status, e.body))
# Typed lists: each item decodes into the client's models.
print(len(v1.list_node().items), len(v1.list_namespaced_pod("default").items))
"""


def check_poison_input(up):
    """Values of the wrong type are refused on every path, so the lists that typed clients
    decode keep working; names no URL can address are refused."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "poison"},
            "status": {"conditions": "x"}}
    rc, _, err = up.kubectl(["create", "-f", "-"], check=False, stdin=json.dumps(node))
    if rc == 0 or "cannot unmarshal string into Go struct field NodeStatus.status.conditions" \
            not in err:
        raise Fail("node with conditions \"x\" not refused: " + err)
    first = up.kubectl(["get", "nodes", "-o", "name"])[1].split()[0]
    rc, _, err = up.kubectl(["patch", first, "--subresource=status", "--type=merge", "-p",
                             '{"status":{"conditions":"x"}}'], check=False)
    if rc == 0 or "cannot unmarshal" not in err:
        raise Fail("status patch of the wrong type not refused: " + err)
    rc, _, err = up.kubectl(["label", first, "--overwrite", "e2e-poison=1"], check=False)
    if rc != 0:
        raise Fail("a well-typed write after the refused ones: " + err)
    nodes = json.loads(up.kubectl(["get", "nodes", "-o", "json"])[1])["items"]
    if len(nodes) < 4 or any(n["metadata"]["name"] == "poison" for n in nodes):
        raise Fail("nodes after the poison node: %s" % [n["metadata"]["name"] for n in nodes])
    up.kubectl(["label", first, "e2e-poison-"])
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ".."}}
    rc, _, err = up.kubectl(["create", "-f", "-"], check=False, stdin=json.dumps(cm))
    if rc == 0 or "metadata.name: Invalid value" not in err:
        raise Fail("configmap named \"..\" not refused: " + err)
    p = subprocess.run(["/usr/bin/python3", "-c", POISON_CHECK, up.kubeconfig],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not p.stdout.startswith("%d " % len(nodes)):
        raise Fail("python client after poison writes: " + p.stdout[-2000:] + p.stderr[-2000:])


def check_field_validation(up):
    """fieldValidation: kubectl's default (Strict) rejects a misspelled field with the server's
    message and stores nothing; --validate=false (Ignore) and --validate=warn accept it, drop
    the field and (warn) print the server's warning."""
    def pod(name, **extra_container):
        p = pod_manifest(name, scheduler="fv-nobody", labels={"app": "fv"})
        p["spec"]["containers"][0].update(extra_container)
        return json.dumps(p)

    def get(name):
        rc, out, _ = up.kubectl(["get", "pod", name, "-o", "json"], check=False)
        return json.loads(out) if rc == 0 else None

    rc, _, err = up.kubectl(["create", "-f", "-"], check=False,
                            stdin=pod("fv-strict", imagePullPolicyy="Always"))
    want = ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
            'unknown field "spec.containers[0].imagePullPolicyy"')
    if rc == 0 or want not in err:
        raise Fail("strict create: rc %d %r" % (rc, err))
    if get("fv-strict") is not None:
        raise Fail("strict create stored the pod")
    up.kubectl(["create", "--validate=false", "-f", "-"],
               stdin=pod("fv-ignore", imagePullPolicyy="Always"))
    got = get("fv-ignore")
    if not got or "imagePullPolicyy" in got["spec"]["containers"][0]:
        raise Fail("--validate=false: %r" % got)
    _, _, err = up.kubectl(["apply", "--validate=warn", "-f", "-"],
                           stdin=pod("fv-warn", imagePullPolicyy="Always"))
    if 'Warning: unknown field "spec.containers[0].imagePullPolicyy"' not in err:
        raise Fail("--validate=warn printed no warning: %r" % err)
    got = get("fv-warn")
    if not got or "imagePullPolicyy" in got["spec"]["containers"][0]:
        raise Fail("--validate=warn: %r" % got)
    # Updates: client-side apply patches (strategic merge), server-side apply types the patch.
    rc, _, err = up.kubectl(["apply", "-f", "-"], check=False,
                            stdin=pod("fv-warn", imagePullPolicyy="Always"))
    if rc == 0 or 'strict decoding error: unknown field "spec.containers[0].imagePullPolicyy"' \
            not in err:
        raise Fail("strict apply (patch): rc %d %r" % (rc, err))
    rc, _, err = up.kubectl(["apply", "--server-side", "-f", "-"], check=False,
                            stdin=pod("fv-warn", imagePullPolicyy="Always"))
    if rc == 0 or "imagePullPolicyy: field not declared in schema" not in err:
        raise Fail("server-side apply of an undeclared field: rc %d %r" % (rc, err))
    up.kubectl(["delete", "pod", "fv-ignore", "fv-warn", "--wait=false"])


def check_python_client(up):
    script = os.path.join(HERE, "python_client_check.py")
    p = subprocess.run(["/usr/bin/python3", script, up.kubeconfig], capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        raise Fail("python client: " + p.stdout[-2000:] + p.stderr[-2000:])


def check_restart_keeps_state(up):
    # Nodes change all the time (their kubelets heartbeat): a config map does not.
    up.kubectl(["create", "configmap", "kept", "--from-literal=a=1"])
    cm = json.loads(up.kubectl(["get", "configmap", "kept", "-o", "json"])[1])
    node = json.loads(up.kubectl(["get", "node", "demo-node-001", "-o", "json"])[1])
    rc = up.stop()
    if rc != 0:
        raise Fail("berth up exited with %d on SIGINT" % rc)
    again = Up(up.berth, up.data_dir)
    try:
        got = json.loads(again.kubectl(["get", "configmap", "kept", "-o", "json"])[1])
        if got["metadata"]["resourceVersion"] != cm["metadata"]["resourceVersion"]:
            raise Fail("resourceVersion changed across restart")
        n = json.loads(again.kubectl(["get", "node", "demo-node-001", "-o", "json"])[1])
        if n["metadata"]["uid"] != node["metadata"]["uid"] or \
                n["spec"].get("podCIDR") != node["spec"].get("podCIDR"):
            raise Fail("demo-node-001 changed identity or pod CIDR across restart")
        nodes = again.kubectl(["get", "nodes", "-o", "name"])[1].split()
        if len([x for x in nodes if "demo-node" in x]) != 4:
            raise Fail("demo nodes created again or lost on restart: %s" % nodes)
    finally:
        again.stop()


def check_preemption(up):
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "tiny", "labels": {"kubernetes.io/hostname": "tiny"}},
            "status": {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "10"},
                       "allocatable": {"cpu": "1", "memory": "4Gi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
          "metadata": {"name": "high"}, "value": 1000}
    create(up, [node, pc])
    pin = {"nodeSelector": {"kubernetes.io/hostname": "tiny"}}
    create(up, [pod_manifest("low", cpu="800m", extra_spec=pin)])
    wait_for("low bound", lambda: json.loads(up.kubectl(["get", "pod", "low", "-o", "json"])[1])
             ["spec"].get("nodeName") == "tiny")
    create(up, [pod_manifest("high", cpu="800m", extra_spec=dict(pin, priorityClassName="high"))])

    def high_bound():
        p = json.loads(up.kubectl(["get", "pod", "high", "-o", "json"])[1])
        return p["spec"].get("nodeName") == "tiny"

    wait_for("high bound to tiny after preemption", high_bound, timeout=60)
    rc, _, _ = up.kubectl(["get", "pod", "low"], check=False)
    if rc == 0:
        raise Fail("the victim still exists")
    ev = up.kubectl(["get", "events", "--field-selector", "reason=Preempted", "-o", "json"])[1]
    items = json.loads(ev)["items"]
    if not any(e["involvedObject"]["name"] == "low" for e in items):
        raise Fail("no Preempted event for the victim: %r" % items)
    prio = json.loads(up.kubectl(["get", "pod", "high", "-o", "json"])[1])["spec"]["priority"]
    if prio != 1000:
        raise Fail("priorityClassName not resolved: priority %r" % prio)


def check_kubectl_create_generators(up):
    """kubectl's generators send protobuf bodies; the objects must arrive as JSON would."""
    up.kubectl(["create", "namespace", "gen"])
    up.kubectl(["create", "configmap", "cm", "-n", "gen", "--from-literal=policy.cfg={}"])
    up.kubectl(["create", "secret", "generic", "sec", "-n", "gen", "--from-literal=pw=hunter2"])
    up.kubectl(["create", "serviceaccount", "sa", "-n", "gen"])
    up.kubectl(["create", "deployment", "web", "-n", "gen", "--image=pause", "--replicas=3"])
    up.kubectl(["create", "service", "clusterip", "web", "-n", "gen", "--tcp=80:8080"])
    up.kubectl(["create", "poddisruptionbudget", "web", "-n", "gen", "--selector=app=web",
                "--min-available=2"])
    up.kubectl(["create", "priorityclass", "gen-high", "--value=1000", "--description=e2e"])
    up.kubectl(["create", "role", "reader", "-n", "gen", "--verb=get", "--resource=pods"])
    up.kubectl(["create", "rolebinding", "reader", "-n", "gen", "--role=reader", "--user=bob"])

    def get(kind, name, ns="gen"):
        args = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
        return json.loads(up.kubectl(args)[1])
    if get("configmap", "cm")["data"] != {"policy.cfg": "{}"}:
        raise Fail("configmap data: %r" % get("configmap", "cm").get("data"))
    if get("secret", "sec")["data"] != {"pw": "aHVudGVyMg=="}:
        raise Fail("secret data: %r" % get("secret", "sec").get("data"))
    spec = get("deployment", "web")["spec"]
    if spec["replicas"] != 3 or spec["template"]["spec"]["containers"][0]["image"] != "pause":
        raise Fail("deployment spec: %r" % spec)
    port = get("service", "web")["spec"]["ports"][0]
    if port["port"] != 80 or port["targetPort"] != 8080:
        raise Fail("service port: %r" % port)
    if get("pdb", "web")["spec"].get("minAvailable") != 2:
        raise Fail("pdb: %r" % get("pdb", "web")["spec"])
    pc = get("priorityclass", "gen-high", ns=None)
    if pc["value"] != 1000 or pc.get("description") != "e2e":
        raise Fail("priorityclass: %r" % pc)
    rb = get("rolebinding", "reader")
    if rb["roleRef"]["name"] != "reader" or rb["subjects"][0]["name"] != "bob":
        raise Fail("rolebinding: %r" % rb)


def check_protobuf_pod_body(up):
    """A pod sent in protobuf, as a client-go program configured for it sends one: its volumes,
    probe, tolerations and node affinity arrive whole, and the scheduler honours the affinity."""
    body, expected = protobuf_bodies.pod("pb-web", "demo-node-002")
    port = free_port()
    proxy = subprocess.Popen([KUBECTL, "proxy", "--port", str(port)], env=up.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for("kubectl proxy", lambda: subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "http://127.0.0.1:%d/api" % port]).returncode == 0,
            timeout=20)
        req = urllib.request.Request(
            "http://127.0.0.1:%d/api/v1/namespaces/default/pods" % port, data=body,
            method="POST", headers={"Content-Type": "application/vnd.kubernetes.protobuf",
                                    "Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            if resp.status != 201:
                raise Fail("protobuf pod create: HTTP %d" % resp.status)
    finally:
        proxy.terminate()
        proxy.wait()
    spec = json.loads(up.kubectl(["get", "pod", "pb-web", "-o", "json"])[1])["spec"]
    for key, want in expected.items():
        got = spec.get(key)
        if key == "containers":
            got = [{k: c.get(k) for k in want[0]} for c in got]
        elif key == "tolerations":  # the server adds the default not-ready/unreachable ones
            got = [t for t in got if t.get("tolerationSeconds") == 30]
        if got != want:
            raise Fail("protobuf pod spec.%s: %r, want %r" % (key, got, want))
    wait_for("pb-web bound to demo-node-002", lambda: json.loads(up.kubectl(
        ["get", "pod", "pb-web", "-o", "json"])[1])["spec"].get("nodeName") == "demo-node-002")
    up.kubectl(["delete", "pod", "pb-web", "--wait=false"])


def check_capacity_live(up):
    """berth capacity reads the cluster through the API (the kubeconfig berth up wrote)."""
    tmpl = os.path.join(up.data_dir, "capacity-pod.json")
    with open(tmpl, "w") as f:
        json.dump(pod_manifest("shape", cpu="500m", memory="256Mi"), f)
    p = subprocess.run([up.berth, "capacity", "-f", tmpl, "--kubeconfig", up.kubeconfig,
                        "-o", "json", "--max", "100000"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise Fail("capacity: rc %d %s" % (p.returncode, p.stderr))
    r = json.loads(p.stdout)
    if r["placed"] <= 0 or not all(n.startswith("demo-node-") for n in r["perNode"]):
        raise Fail("capacity: %r" % r)
    if "Insufficient" not in r.get("limit", {}).get("reason", ""):
        raise Fail("capacity names no exhausted resource: %r" % r.get("limit"))
    p = subprocess.run([up.berth, "capacity", "-f", tmpl, "--kubeconfig", up.kubeconfig,
                        "-o", "json", "--max", "2"], capture_output=True, text=True, timeout=120)
    r2 = json.loads(p.stdout)
    if r2["placed"] != 2 or not r2["reachedMax"]:
        raise Fail("capacity --max 2: %r" % r2)


def check_explain_live(up):
    """berth explain reads the live cluster ($KUBECONFIG), says why a pod is pending and which
    node label would place it; applying that change binds the pod there."""
    create(up, [pod_manifest("picky", extra_spec={"nodeSelector": {"disktype": "ssd"}})])
    wait_for("picky pending", lambda: json.loads(up.kubectl(
        ["get", "pod", "picky", "-o", "json"])[1]).get("status", {}).get("conditions"))
    env = dict(os.environ, KUBECONFIG=up.kubeconfig)
    p = subprocess.run([up.berth, "explain", "picky", "-o", "json"], capture_output=True,
                       text=True, timeout=120, env=env)
    if p.returncode != 0:
        raise Fail("explain: rc %d %s" % (p.returncode, p.stderr))
    e = json.loads(p.stdout)
    if e.get("result") != "Unschedulable" or "node affinity/selector" not in e.get("message", ""):
        raise Fail("explain: %r" % {k: e.get(k) for k in ("result", "message")})
    labels = [s for s in e.get("suggestions", []) if s.get("kind") == "label"]
    if not labels or not labels[0].get("node", "").startswith("demo-node-"):
        raise Fail("explain suggests no node label: %r" % e.get("suggestions"))
    node = labels[0]["node"]
    text = subprocess.run([up.berth, "explain", "picky", "--kubeconfig", up.kubeconfig],
                          capture_output=True, text=True, timeout=120)
    if text.returncode != 0 or "disktype" not in text.stdout:
        raise Fail("explain text: rc %d %s%s" % (text.returncode, text.stdout, text.stderr))
    missing = subprocess.run([up.berth, "explain", "nosuchpod", "--kubeconfig", up.kubeconfig],
                             capture_output=True, text=True, timeout=120)
    if missing.returncode == 0 or "default/nosuchpod not found" not in missing.stderr:
        raise Fail("explain of a missing pod: rc %d %r" % (missing.returncode, missing.stderr))
    # A pod larger than every demo node: said so, and no node is asked to free anything.
    create(up, [pod_manifest("huge", cpu="32")])
    p = subprocess.run([up.berth, "explain", "huge", "-o", "json"], capture_output=True,
                       text=True, timeout=120, env=env)
    huge = json.loads(p.stdout)
    if not any(n.startswith("no node is large enough: the pod requests 32 cpu")
               for n in huge.get("notes", [])):
        raise Fail("explain of a 32-cpu pod: %r" % huge.get("notes"))
    if any(s["kind"] == "resources" for s in huge.get("suggestions", [])):
        raise Fail("explain asks to free room for a pod no node holds: %r" % huge["suggestions"])
    up.kubectl(["delete", "pod", "huge", "--wait=false"])
    up.kubectl(["label", "node", node, "disktype=ssd"])
    wait_for("picky bound to %s" % node, lambda: json.loads(up.kubectl(
        ["get", "pod", "picky", "-o", "json"])[1])["spec"].get("nodeName") == node)
    up.kubectl(["label", "node", node, "disktype-"])
    up.kubectl(["delete", "pod", "picky", "--wait=false"])


def check_explain_uses_up_config(up):
    """Against a `berth up --config` whose profile has no NodeAffinity filter, explain schedules
    with that configuration (published in kube-system), so the plugin it names for each node
    is the one the running scheduler rejected it with; --config still overrides."""
    data_dir = tempfile.mkdtemp(prefix="berth-up-e2e-config-")
    config = os.path.join(data_dir, "scheduler.yaml")
    with open(config, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\n"
                "kind: KubeSchedulerConfiguration\n"
                "profiles:\n"
                "- schedulerName: default-scheduler\n"
                "  plugins:\n"
                "    filter:\n"
                "      disabled:\n"
                "      - name: NodeAffinity\n")
    other = Up(up.berth, data_dir, demo_nodes=2, extra=["--config", config])
    try:
        cm = json.loads(other.kubectl(["get", "configmap", "-n", "kube-system",
                                       "berth-scheduler-config", "-o", "json"])[1])
        published = cm.get("data", {})
        if ("KubeSchedulerConfiguration" not in published.get("config.yaml", "")
                or published.get("source") != config):
            raise Fail("published scheduler configuration: %r" % published)
        create(other, [pod_manifest("wide", cpu="64", extra_spec={
            "nodeSelector": {"disktype": "ssd"}})])
        env = other.env()
        p = subprocess.run([up.berth, "explain", "wide", "-o", "json"], capture_output=True,
                           text=True, timeout=120, env=env)
        if p.returncode != 0:
            raise Fail("explain: rc %d %s" % (p.returncode, p.stderr))
        e = json.loads(p.stdout)
        rejected = {n: v.get("rejectedBy") for n, v in e.get("nodes", {}).items()}
        if set(rejected.values()) != {"NodeResourcesFit"}:
            raise Fail("explain against berth up --config: %r (%s)" % (rejected,
                                                                    e.get("configuration")))
        if config not in e.get("configuration", ""):
            raise Fail("explain names configuration %r" % e.get("configuration"))
        default = os.path.join(data_dir, "default.yaml")
        with open(default, "w") as f:
            f.write("apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\n")
        p = subprocess.run([up.berth, "explain", "wide", "-o", "json", "--config", default],
                           capture_output=True, text=True, timeout=120, env=env)
        e = json.loads(p.stdout)
        if {v.get("rejectedBy") for v in e.get("nodes", {}).values()} != {"NodeAffinity"}:
            raise Fail("explain --config overriding the published one: %r" % e.get("nodes"))
    finally:
        other.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def check_workloads_and_auth(up):
    """`kubectl scale`, `get all` and the workload columns, `auth can-i` and `auth whoami`,
    `create quota` (a protobuf body) and `logs` (simulated containers: an empty log)."""
    up.kubectl(["create", "deployment", "web", "--image=nginx", "--replicas=3"])
    up.kubectl(["scale", "deployment", "web", "--replicas=5"])
    got = json.loads(up.kubectl(["get", "deployment", "web", "-o", "json"])[1])
    if got["spec"]["replicas"] != 5:
        raise Fail("kubectl scale: spec.replicas is %s" % got["spec"]["replicas"])
    rc, _, err = up.kubectl(["scale", "deployment", "web", "--replicas=1", "--current-replicas=3"],
                            check=False)
    if rc == 0 or "Expected replicas to be 3, was 5" not in err:
        raise Fail("kubectl scale --current-replicas with a stale count: rc %d, %s" % (rc, err))
    out = up.kubectl(["get", "deployments", "-o", "wide"])[1]
    # The Deployment controller is rolling it out meanwhile: READY, UP-TO-DATE and AVAILABLE
    # are whatever it has reached.
    if not re.search(r"^web\s+\d/5\s+\d\s+\d\s+\S+\s+nginx\s+nginx\s+app=web$", out, re.M):
        raise Fail("kubectl get deployments -o wide:\n" + out)
    up.kubectl(["create", "service", "clusterip", "web", "--tcp=80:8080"])
    out = up.kubectl(["get", "all"])[1]
    for want in ("deployment.apps/web", "service/web"):
        if want not in out:
            raise Fail("kubectl get all lacks %s:\n%s" % (want, out))
    if up.kubectl(["auth", "can-i", "create", "pods"])[1].strip() != "yes":
        raise Fail("kubectl auth can-i create pods did not say yes")
    if "berth-admin" not in up.kubectl(["auth", "whoami"])[1]:
        raise Fail("kubectl auth whoami does not name berth-admin")
    up.kubectl(["create", "quota", "q", "--hard=pods=10,cpu=2"])
    hard = json.loads(up.kubectl(["get", "quota", "q", "-o", "json"])[1])["spec"]["hard"]
    if hard != {"pods": "10", "cpu": "2"}:
        raise Fail("kubectl create quota stored %s" % hard)
    up.kubectl(["run", "logless", "--image=nginx"])
    up.kubectl(["wait", "--for=condition=Ready", "pod/logless", "--timeout=30s"])
    # A simulated container writes nothing: its log is empty.
    rc, out, err = up.kubectl(["logs", "logless"], check=False)
    if rc != 0 or out:
        raise Fail("kubectl logs of a running pod: rc %d, %r %s" % (rc, out, err))
    up.kubectl(["delete", "pod", "logless", "--wait=false"])
    up.kubectl(["delete", "quota", "q"])
    up.kubectl(["delete", "deployment", "web"])
    up.kubectl(["delete", "service", "web"])


def check_operator_semantics(up):
    """What operators type without thinking: `delete --dry-run=server` deletes nothing, the
    built-in namespaces stay, `taint key-` removes the taint, `drain` stops at a disruption
    budget, a new namespace has its default service account, `auth can-i --list`, `create job`
    and `cronjob`, `apply --prune` (whose default list includes batch/v1 Jobs), and a selector
    watch reports a pod that leaves the selector."""
    up.kubectl(["create", "configmap", "keep", "--from-literal=a=1"])
    out = up.kubectl(["delete", "configmap", "keep", "--dry-run=server"])[1]
    if "server dry run" not in out:
        raise Fail("kubectl delete --dry-run=server printed: " + out)
    up.kubectl(["get", "configmap", "keep"])
    rc, _, err = up.kubectl(["delete", "namespace", "kube-public"], check=False)
    if rc == 0 or "this namespace may not be deleted" not in err:
        raise Fail("kubectl delete namespace kube-public: rc %d, %s" % (rc, err))
    node = json.loads(up.kubectl(["get", "nodes", "-o", "json"])[1])["items"][0]["metadata"]["name"]
    up.kubectl(["taint", "nodes", node, "dedicated=gpu:NoSchedule"])
    up.kubectl(["taint", "nodes", node, "dedicated:NoSchedule-"])
    taints = json.loads(up.kubectl(["get", "node", node, "-o", "json"])[1])["spec"].get("taints")
    if taints:
        raise Fail("taint still there after `kubectl taint ... dedicated:NoSchedule-`: %s" % taints)
    up.kubectl(["create", "namespace", "team-e2e"])
    up.kubectl(["get", "serviceaccount", "default", "-n", "team-e2e"])
    up.kubectl(["get", "configmap", "kube-root-ca.crt", "-n", "team-e2e"])
    listed = up.kubectl(["auth", "can-i", "--list"])[1]
    if "*.*" not in listed:
        raise Fail("kubectl auth can-i --list:\n" + listed)
    up.kubectl(["create", "job", "once", "--image=busybox", "-n", "team-e2e", "--", "true"])
    up.kubectl(["create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *",
                "-n", "team-e2e"])
    got = json.loads(up.kubectl(["get", "cronjob", "tick", "-n", "team-e2e", "-o", "json"])[1])
    if got["spec"]["schedule"] != "*/5 * * * *":
        raise Fail("kubectl create cronjob stored %s" % got["spec"])
    cms = [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": n, "namespace": "team-e2e", "labels": {"set": "prune"}}}
           for n in ("p1", "p2")]
    up.kubectl(["apply", "-f", "-", "-l", "set=prune", "--prune"],
               stdin="\n".join(json.dumps(o) for o in cms))
    out = up.kubectl(["apply", "-f", "-", "-l", "set=prune", "--prune"],
                     stdin=json.dumps(cms[0]))[1]
    if "configmap/p2 pruned" not in out:
        raise Fail("kubectl apply --prune printed:\n" + out)

    # drain stops at a budget that allows no disruption of a running pod.
    pod = pod_manifest("guarded", labels={"app": "guarded"})
    pod["spec"]["nodeName"] = node
    create(up, [pod])
    up.kubectl(["patch", "pod", "guarded", "--subresource", "status", "--type", "merge", "-p",
                json.dumps({"status": {"phase": "Running"}})])
    up.kubectl(["create", "poddisruptionbudget", "guard", "--selector=app=guarded",
                "--max-unavailable=0"])
    try:
        rc, out, err = up.kubectl(["drain", node, "--pod-selector=app=guarded", "--timeout=4s",
                                   "--ignore-daemonsets", "--force"], check=False)
    finally:
        up.kubectl(["uncordon", node])
    if rc == 0 or "disruption budget" not in err + out:
        raise Fail("kubectl drain past a budget: rc %d, %s %s" % (rc, out, err))
    up.kubectl(["get", "pod", "guarded"])

    # A watch through a selector: the pod leaves it when it finishes.
    watch = subprocess.Popen(
        [KUBECTL, "get", "pods", "--field-selector=status.phase!=Succeeded", "--watch-only",
         "--output-watch-events", "-o", "jsonpath={.type} {.object.metadata.name}{\"\\n\"}"],
        env=up.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        up.kubectl(["patch", "pod", "guarded", "--subresource", "status", "--type", "merge", "-p",
                    json.dumps({"status": {"phase": "Succeeded"}})])
        time.sleep(1.5)
    finally:
        watch.terminate()
        out, _ = watch.communicate(timeout=10)
    if "DELETED guarded" not in out:
        raise Fail("a selector watch did not report the finished pod as DELETED: %r" % out)
    up.kubectl(["delete", "pod", "guarded", "--wait=false"])
    up.kubectl(["delete", "pdb", "guard"])
    up.kubectl(["delete", "configmap", "keep"])
    up.kubectl(["delete", "namespace", "team-e2e", "--wait=false"])


def check_simulated_kubelets(up):
    """The simulated kubelets: a pod runs and becomes Ready with an IP, nodes hold leases, a
    deletion waits for the kubelet, and a pod with a run time finishes."""
    up.kubectl(["run", "sim", "--image=nginx"])
    up.kubectl(["wait", "--for=condition=Ready", "pod/sim", "--timeout=30s"], timeout=45)
    pod = json.loads(up.kubectl(["get", "pod", "sim", "-o", "json"])[1])
    st = pod["status"]
    if st.get("phase") != "Running" or not st.get("podIP") or not st.get("hostIP"):
        raise Fail("pod sim not running with IPs: %s" % st)
    c = st["containerStatuses"][0]
    if not (c["ready"] and c["started"] and "running" in c["state"] and c["restartCount"] == 0):
        raise Fail("container status of sim: %s" % c)
    node = pod["spec"]["nodeName"]
    cidr = json.loads(up.kubectl(["get", "node", node, "-o", "json"])[1])["spec"].get("podCIDR")
    prefix = cidr.rsplit(".", 1)[0] + "." if cidr else None
    if not prefix or not st["podIP"].startswith(prefix):
        raise Fail("pod IP %s not in node %s's pod CIDR %s" % (st["podIP"], node, cidr))
    described = up.kubectl(["describe", "node", node])[1]
    if "Failed to get lease" in described or \
            not re.search(r"HolderIdentity:\s+" + re.escape(node), described):
        raise Fail("kubectl describe node shows no lease:\n" + described)
    lease = json.loads(up.kubectl(["get", "lease", node, "-n", "kube-node-lease", "-o",
                                   "json"])[1])
    if lease["spec"]["leaseDurationSeconds"] != 40:
        raise Fail("lease of %s: %s" % (node, lease["spec"]))
    t = time.time()
    up.kubectl(["delete", "pod", "sim", "--timeout=30s"], timeout=45)
    if time.time() - t > 20:
        raise Fail("kubectl delete pod took %.1fs" % (time.time() - t))
    done = pod_manifest("once", extra_spec={"restartPolicy": "Never"})
    done["metadata"]["annotations"] = {"berth.dev/run-seconds": "1"}
    create(up, [done])
    up.kubectl(["wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/once", "--timeout=30s"],
               timeout=45)
    term = json.loads(up.kubectl(["get", "pod", "once", "-o", "json"])[1])
    term = term["status"]["containerStatuses"][0]["state"]["terminated"]
    if term["exitCode"] != 0 or term["reason"] != "Completed":
        raise Fail("pod once ended %s" % term)
    up.kubectl(["delete", "pod", "once"])


def check_replicaset_controller(up):
    """The ReplicaSet controller of `berth up` creates the pods (bound by the scheduler), owned
    by the set, scales them down and reports status."""
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rsweb"},
          "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "rsweb"}},
                   "template": {"metadata": {"labels": {"app": "rsweb"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx",
                                                         "resources": {"requests": {"cpu": "10m"}}}]}}}}
    create(up, [rs])
    uid = json.loads(up.kubectl(["get", "rs", "rsweb", "-o", "json"])[1])["metadata"]["uid"]

    def bound(n):
        pods = pods_json(up, selector="app=rsweb")
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        return len(live) == n and all(p["spec"].get("nodeName") for p in live) and live
    pods = wait_for("3 bound pods of rsweb", lambda: bound(3))
    for p in pods:
        refs = p["metadata"].get("ownerReferences", [])
        if not p["metadata"]["name"].startswith("rsweb-") or not any(
                r.get("controller") and r["uid"] == uid for r in refs):
            raise Fail("pod not owned by rsweb: %r" % p["metadata"])
    wait_for("rsweb status", lambda: json.loads(up.kubectl(["get", "rs", "rsweb", "-o", "json"])[1])
             .get("status", {}).get("replicas") == 3)
    up.kubectl(["scale", "rs", "rsweb", "--replicas=1"])
    wait_for("rsweb scaled down", lambda: bound(1))
    st = wait_for("rsweb status after scale-down",
                  lambda: (lambda s: s if s.get("replicas") == 1 and s.get("observedGeneration") == 2
                           else None)(json.loads(up.kubectl(["get", "rs", "rsweb", "-o", "json"])[1])
                                      .get("status", {})))
    if st.get("fullyLabeledReplicas") != 1:
        raise Fail("rsweb status: %r" % st)
    up.kubectl(["delete", "rs", "rsweb"])
    # Waited for: the deletions would otherwise reach the next check (a pod short of CPU),
    # whose retries they legitimately cause.
    up.kubectl(["delete", "pods", "-l", "app=rsweb"], timeout=90)


def check_pod_cidr_flags(up):
    """--cluster-cidr and --node-cidr-mask-size: the nodes' pod CIDRs are cut from the range
    in blocks of the size given and a pod's IP comes from its node's; a mask the range cannot
    hold is refused at start, naming the flag."""
    data_dir = tempfile.mkdtemp(prefix="berth-up-e2e-cidr-")
    other = Up(up.berth, data_dir, demo_nodes=2,
               extra=["--cluster-cidr", "10.200.0.0/16", "--node-cidr-mask-size", "26"])
    try:
        deadline = time.time() + 30
        cidrs = []
        while time.time() < deadline:
            nodes = json.loads(other.kubectl(["get", "nodes", "-o", "json"])[1])["items"]
            cidrs = sorted(n["spec"].get("podCIDR", "") for n in nodes)
            if all(cidrs):
                break
            time.sleep(0.2)
        if cidrs != ["10.200.0.0/26", "10.200.0.64/26"]:
            raise Fail("pod CIDRs with --cluster-cidr 10.200.0.0/16 --node-cidr-mask-size 26: %r"
                       % cidrs)
        other.kubectl(["run", "cidr", "--image=nginx"])
        other.kubectl(["wait", "--for=condition=Ready", "pod/cidr", "--timeout=30s"], timeout=45)
        ip = json.loads(other.kubectl(["get", "pod", "cidr", "-o", "json"])[1])["status"]["podIP"]
        if not ip.startswith("10.200.0.") or int(ip.rsplit(".", 1)[1]) >= 128:
            raise Fail("pod IP %s outside the nodes' pod CIDRs %r" % (ip, cidrs))
    finally:
        other.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    bad_dir = tempfile.mkdtemp(prefix="berth-up-e2e-cidr-bad-")
    try:
        p = subprocess.run([up.berth, "up", "--data-dir", bad_dir, "--port", "0",
                            "--cluster-cidr", "10.200.0.0/16", "--node-cidr-mask-size", "12"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode == 0 or "--node-cidr-mask-size: 12 must be between" not in p.stderr:
            raise Fail("berth up with a mask wider than its range: rc %d %s"
                       % (p.returncode, p.stderr))
    finally:
        shutil.rmtree(bad_dir, ignore_errors=True)


CHECKS = [check_nodes_ready, check_simulated_kubelets, check_kubectl_verbs, check_workloads_and_auth,
          check_operator_semantics, check_list_manifests, check_kubectl_explain, check_metrics,
          check_server_side_apply_managers, check_kubectl_create_generators, check_protobuf_pod_body,
          check_watch,
          check_capacity_live, check_explain_live, check_explain_uses_up_config,
          check_pod_cidr_flags,
          check_batch_bound, check_replicaset_controller,
          check_unschedulable_then_bound, check_preemption, check_other_scheduler_left_alone, check_bad_input,
          check_poison_input, check_field_validation, check_python_client, check_restart_keeps_state]


def run_checks(checks, up, wanted=()):
    """Runs each check (all, or those named in `wanted`) against `up`, printing PASS or FAIL
    with the time taken; returns (passed, failed)."""
    passed = failed = 0
    for check in checks:
        if wanted and check.__name__ not in wanted:
            continue
        t = time.time()
        try:
            check(up)
            passed += 1
            print("PASS %s (%.1fs)" % (check.__name__, time.time() - t), flush=True)
        except (Fail, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
            failed += 1
            print("FAIL %s: %s" % (check.__name__, e), flush=True)
    return passed, failed


def run_against_up(checks, prefix, **up_args):
    """Starts `berth up` (sys.argv[1]; `up_args` as Up takes them) on a fresh data directory,
    runs `checks` (those named in sys.argv[2:], or all) against it, prints the log's tail on a
    failure and "N passed, M failed", and exits non-zero on failure."""
    berth = os.path.abspath(sys.argv[1])
    wanted = set(sys.argv[2:])
    data_dir = tempfile.mkdtemp(prefix=prefix)
    passed = failed = 0
    up = None
    try:
        up = Up(berth, data_dir, **up_args)
        passed, failed = run_checks(checks, up, wanted)
    except Fail as e:
        failed += 1
        print("FAIL startup: %s" % e)
    finally:
        if up and up.proc.poll() is None:
            up.stop()
        if failed:
            print("berth up log (tail):\n" + open(os.path.join(data_dir, "up.log")).read()[-4000:])
        shutil.rmtree(data_dir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


def main():
    run_against_up(CHECKS, "berth-up-e2e-")

if __name__ == "__main__":
    main()
