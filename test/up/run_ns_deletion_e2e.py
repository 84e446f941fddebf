#!/usr/bin/env python3
"""End-to-end tests of namespace deletion in `berth up`, with the real kubectl.

Usage: run_ns_deletion_e2e.py BERTH [CHECK ...]

* a namespace of 3,000 ConfigMaps: `kubectl delete namespace` waits until it is gone, a watch
  sees every ConfigMap go, and the time it takes is printed (the rate docs/up.md gives);
* `kubectl get ns` shows Terminating while an object's finalizer holds the namespace, creates
  in it are refused (403), and `kubectl delete namespace` returns once the finalizer is removed;
* the namespace's status.conditions, read with `kubectl get namespace -o json`, are the five
  deletion conditions in order and name what is left (a ConfigMap, a pod and a custom resource
  held by finalizers) and the finalizers holding it, with the namespace controller's reasons
  and messages; they turn False as the content goes, while another finalizer keeps the
  namespace, which goes once `finalize` removes that one;
* a namespace with two running pods and an unscheduled one: `kubectl delete namespace` marks
  the running pods Terminating with their grace period (30 s) while the unscheduled one goes at
  once, the namespace's conditions count the Terminating pods meanwhile, and the namespace goes
  once the simulated kubelets confirm (after --max-termination-grace, 1 s); the time it takes
  is printed;
* without kubelets (`berth up --no-kubelets`) a bound pod keeps its namespace Terminating past
  its grace period (NamespaceDeletionContentFailure True), until it is deleted with no grace;
* the server is killed (SIGKILL) right after the DELETE of a namespace of 3,000 ConfigMaps and
  restarted on the same data directory: the namespace is Terminating or gone, then gone with
  all its content, and created again it is empty.
Prints one line per check and "N passed, M failed".
"""
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import KUBECTL, Fail, Up, run_against_up, wait_for  # noqa: E402

CONFIGMAPS = 3000


class Api:
    """Requests straight to the API server of `up` (kubectl sends one object per process)."""

    def __init__(self, up):
        self.port = up.port
        with open(os.path.join(up.data_dir, "token")) as f:
            self.token = f.read().strip()
        self.context = ssl.create_default_context(cafile=os.path.join(up.data_dir, "ca.crt"))

    def connect(self):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context,
                                           timeout=60)

    def request(self, conn, method, path, body=None):
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")

    def fill(self, ns, count, threads=8):
        """Creates namespace `ns` and `count` ConfigMaps in it, from `threads` connections."""
        conn = self.connect()
        status, body = self.request(conn, "POST", "/api/v1/namespaces",
                                    {"metadata": {"name": ns}})
        if status != 201:
            raise Fail("creating namespace %s: %d %s" % (ns, status, body))
        errors = []

        def create(first):
            c = self.connect()
            for i in range(first, count, threads):
                status, body = self.request(c, "POST", "/api/v1/namespaces/%s/configmaps" % ns,
                                            {"metadata": {"name": "cm-%05d" % i},
                                             "data": {"key": "value-%d" % i}})
                if status != 201:
                    errors.append("%d %s" % (status, body.get("message")))
                    return

        workers = [threading.Thread(target=create, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        if errors:
            raise Fail("creating ConfigMaps in %s: %s" % (ns, errors[0]))


def configmap_names(up, ns):
    out = up.kubectl(["get", "configmaps", "-n", ns, "-o", "name"])[1]
    return [line for line in out.split() if line]


def namespace(up, name):
    rc, out, _ = up.kubectl(["get", "namespace", name, "-o", "json"], check=False)
    return json.loads(out) if rc == 0 else None


def check_delete_waits_and_watchers_see_every_object(up):
    Api(up).fill("timed", CONFIGMAPS)
    watch = subprocess.Popen(
        [KUBECTL, "get", "configmaps", "-n", "timed", "--watch-only", "--output-watch-events",
         "-o", "jsonpath={.type} {.object.metadata.name}{\"\\n\"}"],
        env=up.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # the watch is open
        t = time.time()
        rc, out, err = up.kubectl(["delete", "namespace", "timed"], timeout=120)
        took = time.time() - t
        if "namespace \"timed\" deleted" not in out:
            raise Fail("kubectl delete namespace printed: %s %s" % (out, err))
        if namespace(up, "timed") is not None:
            raise Fail("kubectl delete namespace returned before the namespace was gone")
        time.sleep(1.0)
    finally:
        watch.terminate()
        events, _ = watch.communicate(timeout=10)
    gone = [line for line in events.splitlines() if line.startswith("DELETED cm-")]
    if len(gone) != CONFIGMAPS:
        raise Fail("the watch saw %d of %d ConfigMaps deleted" % (len(gone), CONFIGMAPS))
    print("  kubectl delete namespace of %d ConfigMaps: %.2f s (%.0f objects/s, kubectl's "
          "start and its wait included)" % (CONFIGMAPS, took, CONFIGMAPS / took), flush=True)


def check_a_finalizer_holds_the_namespace_terminating(up):
    up.kubectl(["create", "namespace", "held"])
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "kept", "namespace": "held",
                      "finalizers": ["example.com/keep"]}}))
    up.kubectl(["delete", "namespace", "held", "--wait=false"])
    listed = up.kubectl(["get", "namespaces"])[1]
    if not any(line.split()[:2] == ["held", "Terminating"] for line in listed.splitlines()):
        raise Fail("kubectl get namespaces does not show held as Terminating:\n" + listed)
    rc, _, err = up.kubectl(["create", "configmap", "late", "-n", "held"], check=False)
    if rc == 0 or "unable to create new content in namespace held because it is being " \
                  "terminated" not in err:
        raise Fail("a create in a Terminating namespace: rc %d, %s" % (rc, err))

    def conditions_say_why():
        ns = namespace(up, "held") or {}
        return any(c.get("type") == "NamespaceFinalizersRemaining" and c.get("status") == "True"
                   and "example.com/keep in 1 resource instances" in c.get("message", "")
                   for c in ns.get("status", {}).get("conditions", []))

    wait_for("the namespace's conditions to name the finalizer", conditions_say_why, timeout=30)
    waiting = subprocess.Popen([KUBECTL, "delete", "namespace", "held", "--timeout=60s"],
                               env=up.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    time.sleep(1.0)
    if waiting.poll() is not None:
        raise Fail("kubectl delete namespace returned while the namespace was still there")
    up.kubectl(["patch", "configmap", "kept", "-n", "held", "--type", "merge", "-p",
                json.dumps({"metadata": {"finalizers": None}})])
    out, err = waiting.communicate(timeout=90)
    if waiting.returncode != 0:
        raise Fail("kubectl delete namespace held: rc %d, %s" % (waiting.returncode, err))
    if namespace(up, "held") is not None:
        raise Fail("namespace held is still there")


DELETION_CONDITIONS = ["NamespaceDeletionDiscoveryFailure",
                       "NamespaceDeletionGroupVersionParsingFailure",
                       "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
                       "NamespaceFinalizersRemaining"]


def conditions_of(up, name):
    """[(type, status, reason, message)] of namespace `name`'s status.conditions, in order."""
    ns = namespace(up, name) or {}
    return [(c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
            for c in ns.get("status", {}).get("conditions", [])]


def check_conditions_name_what_is_left_and_follow_it_away(up):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "widgets.nsdel.berth.dev"},
         "spec": {"group": "nsdel.berth.dev", "scope": "Namespaced",
                  "names": {"plural": "widgets", "kind": "Widget"},
                  "versions": [{"name": "v1", "served": True, "storage": True,
                                "schema": {"openAPIV3Schema": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True}}}]}}))
    up.kubectl(["wait", "--for=condition=established", "--timeout=30s",
                "crd/widgets.nsdel.berth.dev"])
    # Another finalizer keeps the namespace once emptied, so its last conditions can be read.
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "archived"},
         "spec": {"finalizers": ["example.com/archive"]}}))
    items = [{"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "kept", "finalizers": ["example.com/block"]}},
             {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "web", "finalizers": ["example.com/block"]},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
             {"apiVersion": "nsdel.berth.dev/v1", "kind": "Widget",
              "metadata": {"name": "w", "finalizers": ["nsdel.berth.dev/keep"]}}]
    for item in items:
        up.kubectl(["create", "-n", "archived", "-f", "-"], stdin=json.dumps(item))
    up.kubectl(["delete", "namespace", "archived", "--wait=false"])
    held = [
        ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
         "All resources successfully discovered"),
        ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
         "All legacy kube types successfully parsed"),
        ("NamespaceDeletionContentFailure", "False", "ContentDeleted",
         "All content successfully deleted, may be waiting on finalization"),
        ("NamespaceContentRemaining", "True", "SomeResourcesRemain",
         "Some resources are remaining: configmaps. has 1 resource instances, pods. has 1 "
         "resource instances, widgets.nsdel.berth.dev has 1 resource instances"),
        ("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
         "Some content in the namespace has finalizers remaining: example.com/block in 2 "
         "resource instances, nsdel.berth.dev/keep in 1 resource instances")]
    wait_for("the conditions to name what is left",
             lambda: conditions_of(up, "archived") == held or None, timeout=30)
    for line in up.kubectl(["get", "namespace", "archived", "-o",
                            "jsonpath={range .status.conditions[*]}{.type} {.status} "
                            "{.reason}{\"\\n\"}{end}"])[1].splitlines():
        print("  " + line, flush=True)
    # The pod goes: the counts follow.
    up.kubectl(["patch", "pod", "web", "-n", "archived", "--type", "merge", "-p",
                json.dumps({"metadata": {"finalizers": None}})])
    wait_for("the conditions to count one pod less", lambda: dict(
        (c[0], c[3]) for c in conditions_of(up, "archived")).get(
        "NamespaceFinalizersRemaining") == "Some content in the namespace has finalizers "
        "remaining: example.com/block in 1 resource instances, nsdel.berth.dev/keep in 1 "
        "resource instances", timeout=30)
    up.kubectl(["patch", "configmap", "kept", "-n", "archived", "--type", "merge", "-p",
                json.dumps({"metadata": {"finalizers": None}})])
    up.kubectl(["patch", "widget", "w", "-n", "archived", "--type", "merge", "-p",
                json.dumps({"metadata": {"finalizers": None}})])
    emptied = held[:3] + [
        ("NamespaceContentRemaining", "False", "ContentRemoved",
         "All content successfully removed"),
        ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
         "All content-preserving finalizers finished")]
    wait_for("the conditions to say the content is gone",
             lambda: conditions_of(up, "archived") == emptied or None, timeout=30)
    ns = namespace(up, "archived")
    if ns["status"].get("phase") != "Terminating" or \
            ns["spec"].get("finalizers") != ["example.com/archive"]:
        raise Fail("emptied namespace: %s" % ns)
    ns["spec"]["finalizers"] = []
    up.kubectl(["replace", "--raw", "/api/v1/namespaces/archived/finalize", "-f", "-"],
               stdin=json.dumps(ns))
    wait_for("namespace archived gone", lambda: namespace(up, "archived") is None, timeout=30)
    up.kubectl(["delete", "crd", "widgets.nsdel.berth.dev"])


def watch_json(up, args):
    """Starts `kubectl get ARGS --watch-only --output-watch-events -o json`."""
    return subprocess.Popen([KUBECTL, "get"] + args + ["--watch-only", "--output-watch-events",
                                                        "-o", "json"],
                            env=up.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def watch_events(proc):
    """Stops a watch_json watch and returns its events, [(type, object)]."""
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    decoder, events, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(out) and out[at].isspace():
            at += 1
        if at >= len(out):
            return events
        event, at = decoder.raw_decode(out, at)
        events.append((event.get("type"), event.get("object", {})))


def condition(ns, kind):
    for c in ns.get("status", {}).get("conditions", []):
        if c.get("type") == kind:
            return c
    return {}


def check_running_pods_go_when_their_kubelet_confirms(up):
    up.kubectl(["create", "namespace", "running"])
    for name in ("web", "db"):
        up.kubectl(["run", name, "--image=nginx", "-n", "running"])
    # No node has the label: the pod stays unscheduled.
    up.kubectl(["create", "-n", "running", "-f", "-"], stdin=json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "unplaced"},
         "spec": {"nodeSelector": {"nsdel.berth.dev/none": "x"},
                  "containers": [{"name": "c", "image": "nginx"}]}}))
    up.kubectl(["wait", "--for=condition=Ready", "pod/web", "pod/db", "-n", "running",
                "--timeout=30s"], timeout=45)
    pods = watch_json(up, ["pods", "-n", "running"])
    namespaces = watch_json(up, ["namespaces"])
    try:
        time.sleep(1.5)  # the watches are open
        t = time.time()
        up.kubectl(["delete", "namespace", "running", "--timeout=60s"], timeout=90)
        took = time.time() - t
        if namespace(up, "running") is not None:
            raise Fail("kubectl delete namespace returned before the namespace was gone")
        time.sleep(1.0)
    finally:
        pod_events = watch_events(pods)
        ns_events = [(kind, obj) for kind, obj in watch_events(namespaces)
                     if obj.get("metadata", {}).get("name") == "running"]
    seen = {}
    for kind, obj in pod_events:
        meta = obj.get("metadata", {})
        seen.setdefault(meta.get("name"), []).append(
            (kind, meta.get("deletionGracePeriodSeconds") if "deletionTimestamp" in meta else None))
    for name in ("web", "db"):
        if (("MODIFIED", 30) not in seen.get(name, []) or
                seen[name][-1][0] != "DELETED"):
            raise Fail("pod %s was not Terminating for 30 s, then deleted: %s" %
                       (name, seen.get(name)))
    if seen.get("unplaced") != [("DELETED", None)]:
        raise Fail("the unscheduled pod did not go at once: %s" % seen.get("unplaced"))
    counted = [condition(obj, "NamespaceContentRemaining").get("message") for _, obj in ns_events]
    if "Some resources are remaining: pods. has 2 resource instances" not in counted:
        raise Fail("the namespace's conditions never counted the Terminating pods: %s" % counted)
    if not ns_events or ns_events[-1][0] != "DELETED":
        raise Fail("the namespace was not deleted: %s" % [k for k, _ in ns_events])
    # The kubelets confirm after --max-termination-grace (1 s), far within the 30 s.
    if not 1.0 <= took < 15:
        raise Fail("kubectl delete namespace with running pods took %.2f s" % took)
    print("  kubectl delete namespace with 2 running pods: %.2f s" % took, flush=True)


def check_without_kubelets_pods_keep_the_namespace(up):
    data_dir = tempfile.mkdtemp(prefix="berth-ns-nokubelets-")
    bare = None
    try:
        bare = Up(up.berth, data_dir, demo_nodes=1, extra=["--no-kubelets"])
        bare.kubectl(["create", "namespace", "stranded"])
        bare.kubectl(["create", "-n", "stranded", "-f", "-"], stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"terminationGracePeriodSeconds": 2,
                      "containers": [{"name": "c", "image": "nginx"}]}}))
        wait_for("pod p bound", lambda: json.loads(bare.kubectl(
            ["get", "pod", "p", "-n", "stranded", "-o", "json"])[1])["spec"].get("nodeName"),
            timeout=30)
        rc, _, _ = bare.kubectl(["delete", "namespace", "stranded", "--timeout=5s"], check=False,
                                timeout=30)
        if rc == 0:
            raise Fail("kubectl delete namespace returned with no kubelet to stop the pod")
        ns = namespace(bare, "stranded")
        failure = condition(ns or {}, "NamespaceDeletionContentFailure")
        if ns is None or ns["status"].get("phase") != "Terminating" or \
                failure.get("status") != "True":
            raise Fail("namespace past its pod's grace period: %s" % ns)
        pod = json.loads(bare.kubectl(["get", "pod", "p", "-n", "stranded", "-o", "json"])[1])
        if pod["metadata"].get("deletionGracePeriodSeconds") != 2:
            raise Fail("pod p not Terminating for 2 s: %s" % pod["metadata"])
        print("  " + failure.get("message", ""), flush=True)
        bare.kubectl(["delete", "pods", "--all", "-n", "stranded", "--grace-period=0", "--force"])
        wait_for("namespace stranded gone", lambda: namespace(bare, "stranded") is None,
                 timeout=30)
    finally:
        if bare and bare.proc.poll() is None:
            bare.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def check_deletion_resumes_after_kill9(up):
    data_dir = tempfile.mkdtemp(prefix="berth-ns-kill9-")
    crashing = Up(up.berth, data_dir, demo_nodes=0)
    again = None
    try:
        api = Api(crashing)
        api.fill("bulk", CONFIGMAPS)
        conn = api.connect()
        status, body = api.request(conn, "DELETE", "/api/v1/namespaces/bulk")
        crashing.proc.kill()
        crashing.proc.wait()
        crashing.log.close()
        if status != 200 or body.get("status", {}).get("phase") != "Terminating":
            raise Fail("DELETE of the namespace: %d %s" % (status, body))
        again = Up(up.berth, data_dir, demo_nodes=0)
        first = namespace(again, "bulk")
        if first is None:
            print("  after the restart: namespace gone", flush=True)
        else:
            phase = first.get("status", {}).get("phase")
            left = len(configmap_names(again, "bulk"))
            print("  after the restart: namespace %s, %d ConfigMaps left" % (phase, left),
                  flush=True)
            if phase != "Terminating":
                raise Fail("after the restart the namespace is %s, not Terminating" % phase)
        wait_for("namespace bulk gone", lambda: namespace(again, "bulk") is None, timeout=60)
        again.kubectl(["create", "namespace", "bulk"])
        left = [n for n in configmap_names(again, "bulk") if n.startswith("configmap/cm-")]
        if left:
            raise Fail("namespace bulk created again holds %d old ConfigMaps" % len(left))
    finally:
        if again and again.proc.poll() is None:
            again.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


CHECKS = [check_delete_waits_and_watchers_see_every_object,
          check_a_finalizer_holds_the_namespace_terminating,
          check_conditions_name_what_is_left_and_follow_it_away,
          check_running_pods_go_when_their_kubelet_confirms,
          check_without_kubelets_pods_keep_the_namespace, check_deletion_resumes_after_kill9]


def main():
    run_against_up(CHECKS, "berth-ns-e2e-", demo_nodes=1)


if __name__ == "__main__":
    main()
