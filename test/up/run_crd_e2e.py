#!/usr/bin/env python3
"""End-to-end tests of CustomResourceDefinitions in `berth up`, with the real kubectl and the
official Python client (/usr/bin/python3's python3-kubernetes).

Usage: run_crd_e2e.py BERTH [CHECK ...]

* scheduler-plugins' PodGroup CRD (test/up/data) applies, becomes Established with its
  accepted names, and is discovered with its short names (`kubectl get pg`);
* CRDs that kube-apiserver refuses are refused with its messages (two storage versions, a
  schema node without a type, a bad group);
* the README's PodGroup applies, `kubectl get pg` prints the CRD's printer columns and
  `kubectl explain pg.spec.minMember` its description;
  malformed PodGroups are refused with kube-apiserver's field errors, unknown fields too;
* merge and JSON patches, the status subresource (generation moves with spec only);
* the Python client's CustomObjectsApi creates, lists, patches status and watches PodGroups
  from a resourceVersion across namespaces; the raw watch of that path (what a scheduler
  plugin's informer opens) from a resourceVersion, and with sendInitialEvents and its
  bookmark;
* a CRD with two versions and a scale subresource: objects read in either version, `kubectl
  scale`, an integer printer column;
* deleting a CRD deletes its objects; CRDs and objects survive a restart and a kill -9.
Prints one line per check and "N passed, M failed".
"""
import base64
import http.client
import json
import os
import signal
import ssl
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, Up, run_against_up, wait_for, run_python_client  # noqa: E402

# These checks write PodGroup status themselves, as a client of the CRD: the podgroup controller,
# which would write it too, is left out (run_gang_e2e.py covers it).
NO_PODGROUP_CONTROLLER = ["--controllers", "*,-podgroup"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
PODGROUP_CRD = os.path.join(DATA, "scheduling.x-k8s.io_podgroups.yaml")
PODGROUP_EXAMPLE = os.path.join(DATA, "podgroup-example.yaml")


def apply(up, obj, check=True):
    return up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj), check=check)


def get(up, args):
    rc, out, _ = up.kubectl(["get"] + args + ["-o", "json"], check=False)
    return json.loads(out) if rc == 0 else None


def refused(up, obj, wanted):
    rc, _, err = apply(up, obj, check=False)
    if rc == 0:
        raise Fail("accepted: %s" % json.dumps(obj)[:200])
    if wanted not in err:
        raise Fail("refused without %r: %s" % (wanted, err.strip()))


def podgroup(name, spec):
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def widget_crd():
    def version(name, storage):
        return {"name": name, "served": True, "storage": storage,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas"}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string", "default": "M"},
                        "replicas": {"type": "integer", "minimum": 0}}},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}}}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.berth.dev"},
            "spec": {"group": "example.berth.dev", "scope": "Cluster",
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                     "versions": [version("v1", True), version("v1beta1", False)]}}


def check_podgroup_crd_established(up):
    up.kubectl(["apply", "-f", PODGROUP_CRD])
    up.kubectl(["wait", "--for=condition=established", "--timeout=30s",
                "crd/podgroups.scheduling.x-k8s.io"])
    crd = get(up, ["crd", "podgroups.scheduling.x-k8s.io"])
    conds = {c["type"]: c for c in crd["status"]["conditions"]}
    if conds["NamesAccepted"]["status"] != "True" or conds["NamesAccepted"]["reason"] != \
            "NoConflicts":
        raise Fail("NamesAccepted: %s" % conds)
    if crd["status"]["acceptedNames"].get("shortNames") != ["pg", "pgs"]:
        raise Fail("acceptedNames: %s" % crd["status"]["acceptedNames"])
    if crd["status"].get("storedVersions") != ["v1alpha1"]:
        raise Fail("storedVersions: %s" % crd["status"])
    out = up.kubectl(["api-resources", "--api-group=scheduling.x-k8s.io"])[1]
    row = [line.split() for line in out.splitlines() if line.startswith("podgroups")]
    if not row or row[0][1] != "pg,pgs" or row[0][2] != "scheduling.x-k8s.io/v1alpha1" or \
            row[0][3] != "true" or row[0][4] != "PodGroup":
        raise Fail("api-resources: %s" % out)


def check_invalid_crds_refused(up):
    crd = widget_crd()
    crd["spec"]["versions"][1]["storage"] = True
    refused(up, crd, "must have exactly one version marked as storage version")
    crd = widget_crd()
    del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"]
    refused(up, crd, "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: "
                     "Required value: must not be empty for specified object fields")
    crd = widget_crd()
    crd["metadata"]["name"] = "widgets.example"
    crd["spec"]["group"] = "example"
    refused(up, crd, 'spec.group: Invalid value: "example": should be a domain with at least '
                     'one dot')
    crd = widget_crd()
    crd["spec"]["versions"][0]["served"] = "yes"
    refused(up, crd, "spec.versions[0].served: must be a boolean")
    crd = widget_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["type"] = "text"
    refused(up, crd, 'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: '
                     '"text"')


def check_podgroup_example_and_columns(up):
    up.kubectl(["apply", "-f", PODGROUP_EXAMPLE])
    out = up.kubectl(["get", "pg"])[1].splitlines()
    if out[0].split() != ["NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED", "AGE"]:
        raise Fail("columns: %s" % out[0])
    row = out[1].split()
    if row[0] != "nginx" or row[1] != "3":
        raise Fail("row: %s" % out[1])
    # The CRD's schema is published in OpenAPI v3: kubectl explain reads its descriptions.
    out = up.kubectl(["explain", "pg.spec.minMember"])[1]
    if "MinMember defines the minimal number" not in out or "integer" not in out:
        raise Fail("kubectl explain: %s" % out)
    pg = get(up, ["podgroups.scheduling.x-k8s.io", "nginx"])
    if pg["spec"] != {"minMember": 3, "scheduleTimeoutSeconds": 10} or \
            pg["metadata"]["generation"] != 1:
        raise Fail("stored: %s" % pg)


def check_malformed_podgroups_refused(up):
    refused(up, podgroup("zero", {"minMember": 0}),
            "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than "
            "or equal to 1")
    refused(up, podgroup("text", {"minMember": "three"}),
            'spec.minMember: Invalid value: "string": spec.minMember in body must be of type '
            'integer: "string"')
    refused(up, podgroup("cpu", {"minMember": 1, "minResources": {"cpu": "lots"}}),
            'spec.minResources.cpu: Invalid value: "lots": spec.minResources.cpu in body should '
            'match')
    # kubectl asks for strict field validation: unknown fields are errors, not silently pruned.
    refused(up, podgroup("typo", {"minMembers": 2}), 'unknown field "spec.minMembers"')
    rc, _, err = up.kubectl(["apply", "--server-side", "-f", "-"],
                            stdin=json.dumps(podgroup("ssa", {"minMember": 2, "minMembers": 2})),
                            check=False)
    if rc == 0 or ".spec.minMembers: field not declared in schema" not in err:
        raise Fail("server-side apply with an unknown field: rc %d %s" % (rc, err))
    rc, _, err = up.kubectl(["apply", "--validate=false", "-f", "-"],
                            stdin=json.dumps(podgroup("typo", {"minMember": 2, "minMembers": 2})))
    if rc != 0:
        raise Fail("--validate=false: %s" % err)
    if "minMembers" in get(up, ["pg", "typo"])["spec"]:
        raise Fail("unknown field kept")


def check_patches_and_status(up):
    apply(up, podgroup("patched", {"minMember": 2}))
    up.kubectl(["patch", "pg", "patched", "--type=merge", "-p",
                '{"spec":{"minMember":4},"status":{"phase":"Running"}}'])
    pg = get(up, ["pg", "patched"])
    if pg["spec"]["minMember"] != 4 or pg["metadata"]["generation"] != 2 or "status" in pg:
        raise Fail("after merge patch: %s" % pg)
    up.kubectl(["patch", "pg", "patched", "--type=json", "-p",
                '[{"op":"replace","path":"/spec/minMember","value":5}]'])
    up.kubectl(["patch", "pg", "patched", "--subresource=status", "--type=merge", "-p",
                '{"status":{"phase":"Running","running":5}}'])
    pg = get(up, ["pg", "patched"])
    if pg["spec"]["minMember"] != 5 or pg["metadata"]["generation"] != 3 or \
            pg.get("status") != {"phase": "Running", "running": 5}:
        raise Fail("after json and status patches: %s" % pg)
    rc, _, err = up.kubectl(["patch", "pg", "patched", "--type=merge", "-p",
                             '{"spec":{"minMember":-1}}'], check=False)
    if rc == 0 or "should be greater than or equal to 1" not in err:
        raise Fail("invalid patch: rc %d %s" % (rc, err))
    # kubectl patch asks for warnings: the field is reported and pruned.
    _, _, err = up.kubectl(["patch", "pg", "patched", "--type=merge", "-p",
                            '{"spec":{"bogus":1}}'])
    if 'Warning: unknown field "spec.bogus"' not in err or \
            "bogus" in get(up, ["pg", "patched"])["spec"]:
        raise Fail("patch with an unknown field: %s" % err)
    out = up.kubectl(["get", "pg", "patched", "--no-headers"])[1].split()
    if out[1:4] != ["Running", "5", "5"]:
        raise Fail("columns after status: %s" % out)
    names = up.kubectl(["get", "pg", "--field-selector", "metadata.name=patched", "-o",
                        "name"])[1].split()
    if names != ["podgroup.scheduling.x-k8s.io/patched"]:
        raise Fail("field selector: %s" % names)


PYTHON_CLIENT = r'''
import sys
from kubernetes import client, config, watch
config.load_kube_config(sys.argv[1])
api = client.CustomObjectsApi()
g, v, p = "scheduling.x-k8s.io", "v1alpha1", "podgroups"
body = {"apiVersion": g + "/" + v, "kind": "PodGroup", "metadata": {"name": "py"},
        "spec": {"minMember": 2, "minResources": {"cpu": "2", "memory": "1Gi"}}}
made = api.create_namespaced_custom_object(g, v, "default", p, body)
assert made["metadata"]["generation"] == 1, made
listed = api.list_cluster_custom_object(g, v, p)
assert "py" in [i["metadata"]["name"] for i in listed["items"]], listed
rv = listed["metadata"]["resourceVersion"]
st = api.patch_namespaced_custom_object_status(g, v, "default", p, "py",
                                               {"status": {"phase": "Scheduling"}})
assert st["status"] == {"phase": "Scheduling"}, st
got = api.get_namespaced_custom_object_status(g, v, "default", p, "py")
assert got["status"]["phase"] == "Scheduling" and got["metadata"]["generation"] == 1, got
try:
    api.create_namespaced_custom_object(g, v, "default", p, {
        "apiVersion": g + "/" + v, "kind": "PodGroup", "metadata": {"name": "bad"},
        "spec": {"minMember": 0}})
    raise AssertionError("minMember 0 accepted")
except client.ApiException as e:
    assert e.status == 422 and "spec.minMember" in e.body, e.body
seen = []
w = watch.Watch()
for ev in w.stream(api.list_cluster_custom_object, g, v, p, resource_version=rv,
                   allow_watch_bookmarks=True, timeout_seconds=5):
    seen.append((ev["type"], ev["object"]["metadata"].get("name")))
    if ev["type"] == "MODIFIED" and ev["object"]["metadata"]["name"] == "py":
        w.stop()
assert ("MODIFIED", "py") in seen, seen
api.delete_namespaced_custom_object(g, v, "default", p, "py")
print("ok")
'''


def check_python_client(up):
    out = run_python_client(up, PYTHON_CLIENT)
    if "ok" not in out:
        raise Fail("python client: " + out[-2000:])


def raw_get(up, query):
    """GETs every namespace's PodGroups (the path a scheduler plugin lists and watches) with
    `query`; returns (response, connection)."""
    cfg = json.load(open(up.kubeconfig))
    cluster = cfg["clusters"][0]["cluster"]
    ctx = ssl.create_default_context(
        cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    ctx.check_hostname = False
    host, port = cluster["server"].split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=30)
    conn.request("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups?" + query,
                 headers={"Authorization": "Bearer " + cfg["users"][0]["user"]["token"]})
    return conn.getresponse(), conn


def check_scheduler_plugin_watch_path(up):
    resp, conn = raw_get(up, "limit=500")
    listed = json.loads(resp.read())
    conn.close()
    if listed["kind"] != "PodGroupList" or not listed["items"]:
        raise Fail("list: %s" % listed)
    rv = listed["metadata"]["resourceVersion"]
    resp, conn = raw_get(up, "watch=1&resourceVersion=%s&allowWatchBookmarks=true" % rv)
    try:
        apply(up, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                   "metadata": {"name": "watched", "namespace": "kube-system"},
                   "spec": {"minMember": 2}})
        ev = json.loads(resp.readline())
        if ev["type"] != "ADDED" or ev["object"]["metadata"]["name"] != "watched" or \
                int(ev["object"]["metadata"]["resourceVersion"]) <= int(rv):
            raise Fail("first event after %s: %s" % (rv, ev))
    finally:
        conn.close()
    # A list as a watch: every object, then the bookmark that ends the initial events.
    resp, conn = raw_get(up, "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                             "&allowWatchBookmarks=true")
    try:
        names = []
        while True:
            ev = json.loads(resp.readline())
            if ev["type"] == "BOOKMARK":
                ann = ev["object"]["metadata"].get("annotations", {})
                if ann.get("k8s.io/initial-events-end") != "true":
                    raise Fail("bookmark: %s" % ev)
                break
            names.append(ev["object"]["metadata"]["name"])
        if "watched" not in names or "nginx" not in names:
            raise Fail("initial events: %s" % names)
    finally:
        conn.close()
    up.kubectl(["delete", "pg", "watched", "-n", "kube-system"])


def check_versions_scale_and_cluster_scope(up):
    apply(up, widget_crd())
    up.kubectl(["wait", "--for=condition=established", "--timeout=30s",
                "crd/widgets.example.berth.dev"])
    apply(up, {"apiVersion": "example.berth.dev/v1beta1", "kind": "Widget",
               "metadata": {"name": "w"}, "spec": {"replicas": 1}})
    v1 = get(up, ["widgets.v1.example.berth.dev", "w"])
    beta = get(up, ["widgets.v1beta1.example.berth.dev", "w"])
    if v1["apiVersion"] != "example.berth.dev/v1" or \
            beta["apiVersion"] != "example.berth.dev/v1beta1" or v1["spec"]["size"] != "M":
        raise Fail("versions: %s / %s" % (v1, beta))
    up.kubectl(["scale", "widget", "w", "--replicas=4"])
    if get(up, ["wd", "w"])["spec"]["replicas"] != 4:
        raise Fail("kubectl scale did not write spec.replicas")
    out = up.kubectl(["get", "wd", "--no-headers"])[1].split()
    if out[:3] != ["w", "M", "4"]:
        raise Fail("columns: %s" % out)
    rc, _, err = up.kubectl(["scale", "widget", "w", "--replicas=-2"], check=False)
    if rc == 0:
        raise Fail("negative scale accepted")


def check_crd_deletion_removes_objects(up):
    apply(up, {"apiVersion": "example.berth.dev/v1", "kind": "Widget",
               "metadata": {"name": "doomed"}, "spec": {}})
    up.kubectl(["delete", "crd", "widgets.example.berth.dev", "--timeout=60s"])
    rc, _, err = up.kubectl(["get", "widgets.example.berth.dev"], check=False)
    if rc == 0:
        raise Fail("widgets still served after the CRD's deletion")
    apply(up, widget_crd())
    up.kubectl(["wait", "--for=condition=established", "--timeout=30s",
                "crd/widgets.example.berth.dev"])
    left = wait_for("widgets listable", lambda: get(up, ["widgets.example.berth.dev"]))
    if left["items"]:
        raise Fail("objects outlived their CRD: %s" % left["items"])


def restarted(up, sig):
    if sig == signal.SIGKILL:
        up.proc.kill()
        up.proc.wait()
        up.log.close()
    else:
        rc = up.stop()
        if rc != 0:
            raise Fail("berth up exited with %d" % rc)
    return Up(up.berth, up.data_dir, demo_nodes=2, extra=NO_PODGROUP_CONTROLLER)


def check_restart_and_kill_keep_custom_objects(up):
    pg = get(up, ["pg", "nginx"])
    again = restarted(up, signal.SIGINT)
    try:
        got = get(again, ["pg", "nginx"])
        if not got or got["metadata"]["resourceVersion"] != pg["metadata"]["resourceVersion"]:
            raise Fail("nginx after restart: %s" % got)
        apply(again, podgroup("late", {"minMember": 7}))
        third = restarted(again, signal.SIGKILL)
    finally:
        if again.proc.poll() is None:
            again.stop()
    try:
        if (get(third, ["pg", "late"]) or {}).get("spec", {}).get("minMember") != 7:
            raise Fail("late lost by kill -9")
        rc, _, err = apply(third, podgroup("zero", {"minMember": 0}), check=False)
        if rc == 0 or "greater than or equal to 1" not in err:
            raise Fail("schema not enforced after restart: %s" % err)
        out = third.kubectl(["get", "pg"])[1]
        if "MINMEMBER" not in out or "late" not in out:
            raise Fail("get pg after restart: %s" % out)
    finally:
        third.stop()


CHECKS = [
    check_podgroup_crd_established,
    check_invalid_crds_refused,
    check_podgroup_example_and_columns,
    check_malformed_podgroups_refused,
    check_patches_and_status,
    check_python_client,
    check_scheduler_plugin_watch_path,
    check_versions_scale_and_cluster_scope,
    check_crd_deletion_removes_objects,
    check_restart_and_kill_keep_custom_objects,
]


def main():
    run_against_up(CHECKS, "berth-crd-e2e-", demo_nodes=2, extra=NO_PODGROUP_CONTROLLER)


if __name__ == "__main__":
    main()
