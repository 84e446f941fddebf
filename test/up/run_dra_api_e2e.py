#!/usr/bin/env python3
"""End-to-end tests of resource.k8s.io/v1 (Dynamic Resource Allocation's API) in `berth up`,
with the real kubectl and the official Python client (/usr/bin/python3's python3-kubernetes).

Usage: run_dra_api_e2e.py BERTH [CHECK ...]

* discovery (legacy and aggregated) lists deviceclasses, resourceclaims (with status),
  resourceclaimtemplates and resourceslices; `kubectl explain` describes their fields;
* examples/up/dra's DeviceClass (a CEL selector on device.capacity), ResourceClaimTemplate and
  pod apply; the template is defaulted (ExactCount, count 1);
* `kubectl get` prints upstream's columns (claims' STATE, slices' NODE DRIVER POOL);
  resourceslices are selected by spec.nodeName and spec.driver;
* invalid objects are refused with kube-apiserver's messages (a CEL compile error, a request
  with neither `exactly` nor `firstAvailable`, a slice with two node selections);
* a claim's status is written through the status subresource only (allocation then
  reservedFor), and its spec cannot change;
* the Python client reads and writes them through its dynamic client;
* DeviceTaintRules: explained, created, listed, watched and deleted with kubectl; timeAdded set by the
  server (and again when the effect changes), status dropped on create and written through
  the status subresource only; a bad selector, taint or condition refused naming the field.
Prints one line per check and "N passed, M failed".
"""
import base64
import http.client
import json
import os
import ssl
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, run_python_client  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "up", "dra")
RESOURCES = ["deviceclasses", "devicetaintrules", "resourceclaims", "resourceclaimtemplates",
             "resourceslices"]


def apply(up, obj, check=True):
    return up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj), check=check)


def get(up, args):
    return json.loads(up.kubectl(["get"] + args + ["-o", "json"])[1])


def refused(up, obj, wanted):
    rc, _, err = up.kubectl(["create", "-f", "-"], stdin=json.dumps(obj), check=False)
    if rc == 0:
        raise Fail("accepted: %s" % json.dumps(obj)[:300])
    if wanted not in err:
        raise Fail("refused without %r: %s" % (wanted, err.strip()))


def claim(name, requests):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": requests}}}


def slice_of(node, extra=None):
    spec = {"driver": "gpu.example.com", "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-%d" % i,
                         "attributes": {"model": {"string": "a100"},
                                        "driverVersion": {"version": "1.2.0"}},
                         "capacity": {"memory": {"value": "80Gi"}}} for i in range(2)]}
    spec.update(extra or {})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": node + "-gpu.example.com"}, "spec": spec}


def check_discovery(up):
    got = json.loads(up.kubectl(["get", "--raw", "/apis/resource.k8s.io/v1"])[1])
    names = {r["name"] for r in got["resources"]}
    for want in RESOURCES + ["resourceclaims/status", "devicetaintrules/status"]:
        if want not in names:
            raise Fail("discovery lacks %s: %s" % (want, sorted(names)))
    # The aggregated discovery document kubectl reads first.
    cfg = json.load(open(up.kubeconfig))
    cluster = cfg["clusters"][0]["cluster"]
    ctx = ssl.create_default_context(
        cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    ctx.check_hostname = False
    host, port = cluster["server"].split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=30)
    conn.request("GET", "/apis", headers={
        "Authorization": "Bearer " + cfg["users"][0]["user"]["token"],
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    doc = json.loads(conn.getresponse().read())
    conn.close()
    groups = {g["metadata"]["name"]: g for g in doc.get("items", [])}
    if "resource.k8s.io" not in groups:
        raise Fail("aggregated discovery lacks resource.k8s.io: %s" % sorted(groups))
    version = groups["resource.k8s.io"]["versions"][0]
    served = {r["resource"]: r for r in version["resources"]}
    if sorted(served) != RESOURCES or served["resourceclaims"]["scope"] != "Namespaced" or \
            [s["subresource"] for s in served["resourceclaims"].get("subresources", [])] != \
            ["status"]:
        raise Fail("aggregated resource.k8s.io/v1: %s" % version)
    out = up.kubectl(["api-resources", "--api-group", "resource.k8s.io"])[1]
    for want in RESOURCES:
        if want not in out:
            raise Fail("api-resources lacks %s:\n%s" % (want, out))


def check_explain(up):
    out = up.kubectl(["explain", "resourceclaims.spec.devices"])[1]
    for want in ["requests", "constraints", "config"]:
        if want not in out:
            raise Fail("explain resourceclaims.spec.devices lacks %s:\n%s" % (want, out))
    out = up.kubectl(["explain", "resourceclaims.spec.devices.requests.exactly.count"])[1]
    if "Defaults to 1" not in out or "integer" not in out:
        raise Fail("explain ...exactly.count:\n" + out)
    out = up.kubectl(["explain", "resourceslices.spec.pool"])[1]
    if "resourceSliceCount" not in out:
        raise Fail("explain resourceslices.spec.pool:\n" + out)


def check_examples_apply_and_default(up):
    for name in ["deviceclass.yaml", "claim-template.yaml", "pod.yaml"]:
        up.kubectl(["apply", "-f", os.path.join(EXAMPLES, name)])
    cls = get(up, ["deviceclass", "gpu.example.com"])
    if "device.capacity" not in cls["spec"]["selectors"][0]["cel"]["expression"]:
        raise Fail("class: %s" % cls)
    tmpl = get(up, ["resourceclaimtemplate", "single-gpu"])
    exactly = tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    if exactly.get("allocationMode") != "ExactCount" or exactly.get("count") != 1:
        raise Fail("template not defaulted: %s" % exactly)
    pod = get(up, ["pod", "gpu-pod"])
    if pod["spec"]["resourceClaims"][0].get("resourceClaimTemplateName") != "single-gpu":
        raise Fail("pod: %s" % pod["spec"])
    # Re-applying the same files changes nothing (the specs are immutable).
    for name in ["deviceclass.yaml", "claim-template.yaml"]:
        up.kubectl(["apply", "-f", os.path.join(EXAMPLES, name)])


def check_tables_and_field_selectors(up):
    for node in ["node-a", "node-b"]:
        up.kubectl(["create", "-f", "-"], stdin=json.dumps(slice_of(node)))
    out = up.kubectl(["get", "resourceslices"])[1].splitlines()
    if out[0].split() != ["NAME", "NODE", "DRIVER", "POOL", "AGE"]:
        raise Fail("resourceslices header: %s" % out[0])
    row = out[1].split()
    if row[:4] != ["node-a-gpu.example.com", "node-a", "gpu.example.com", "node-a"]:
        raise Fail("resourceslices row: %s" % out[1])
    names = up.kubectl(["get", "resourceslices", "--field-selector", "spec.nodeName=node-b",
                        "-o", "name"])[1].split()
    if names != ["resourceslice.resource.k8s.io/node-b-gpu.example.com"]:
        raise Fail("spec.nodeName selector: %s" % names)
    names = up.kubectl(["get", "resourceslices", "--field-selector",
                        "spec.driver=gpu.example.com", "-o", "name"])[1].split()
    if len(names) != 2:
        raise Fail("spec.driver selector: %s" % names)
    for kind in ["deviceclasses", "resourceclaimtemplates"]:
        header = up.kubectl(["get", kind])[1].splitlines()[0].split()
        if header != ["NAME", "AGE"]:
            raise Fail("%s header: %s" % (kind, header))


def check_invalid_refused(up):
    refused(up, claim("bad-cel", [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com",
        "selectors": [{"cel": {"expression": "device.nosuchfield == 1"}}]}}]),
        "spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value")
    refused(up, claim("neither", [{"name": "gpu"}]),
            "spec.devices.requests[0]: Required value: exactly one of `exactly` or "
            "`firstAvailable` is required")
    refused(up, claim("zero", [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                           "allocationMode": "All",
                                                           "count": 2}}]),
            "must not be specified when allocationMode is 'All'")
    refused(up, slice_of("node-c", {"allNodes": True}),
            "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
            "required, but multiple fields are set")
    rc, out, _ = up.kubectl(["get", "resourceclaims", "-o", "name"], check=False)
    if "bad-cel" in out or "neither" in out:
        raise Fail("refused claims stored: %s" % out)


def check_status_subresource(up):
    apply(up, claim("gpu-claim", [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com"}}]))
    out = up.kubectl(["get", "resourceclaims"])[1].splitlines()
    if out[0].split() != ["NAME", "STATE", "AGE"] or out[1].split()[1] != "pending":
        raise Fail("claims table: %s" % out)
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                           "pool": "node-a", "device": "gpu-0"}]}}
    up.kubectl(["patch", "resourceclaim", "gpu-claim", "--subresource", "status", "--type",
                "merge", "-p", json.dumps({"status": {"allocation": allocation}})])
    up.kubectl(["patch", "resourceclaim", "gpu-claim", "--subresource", "status", "--type",
                "merge", "-p", json.dumps({"status": {"reservedFor": [
                    {"resource": "pods", "name": "gpu-pod", "uid": "uid-1"}]}})])
    row = up.kubectl(["get", "resourceclaim", "gpu-claim", "--no-headers"])[1].split()
    if row[1] != "allocated,reserved":
        raise Fail("claim state: %s" % row)
    moved = dict(allocation)
    moved["devices"] = {"results": [dict(allocation["devices"]["results"][0], device="gpu-1")]}
    rc, _, err = up.kubectl(["patch", "resourceclaim", "gpu-claim", "--subresource", "status",
                             "--type", "merge", "-p",
                             json.dumps({"status": {"allocation": moved}})], check=False)
    if rc == 0 or "status.allocation" not in err or "field is immutable" not in err:
        raise Fail("allocation changed: rc %d %s" % (rc, err))
    rc, _, err = up.kubectl(["patch", "resourceclaim", "gpu-claim", "--type", "merge", "-p",
                             json.dumps({"spec": {"devices": {"requests": [{
                                 "name": "other", "exactly": {
                                     "deviceClassName": "gpu.example.com"}}]}}})],
                            check=False)
    if rc == 0 or "field is immutable" not in err:
        raise Fail("spec changed: rc %d %s" % (rc, err))


PYTHON_CLIENT = r'''
import sys
from kubernetes import config, dynamic
from kubernetes.client import api_client, exceptions
client = dynamic.DynamicClient(api_client.ApiClient(
    configuration=config.load_kube_config(sys.argv[1]) or None))
gv = "resource.k8s.io/v1"
classes = client.resources.get(api_version=gv, kind="DeviceClass")
templates = client.resources.get(api_version=gv, kind="ResourceClaimTemplate")
claims = client.resources.get(api_version=gv, kind="ResourceClaim")
slices = client.resources.get(api_version=gv, kind="ResourceSlice")
names = [c.metadata.name for c in classes.get().items]
assert "gpu.example.com" in names, names
t = templates.get(name="single-gpu", namespace="default")
assert t.spec.spec.devices.requests[0].exactly.count == 1, t
got = [s.spec.nodeName for s in slices.get(field_selector="spec.nodeName=node-a").items]
assert got == ["node-a"], got
made = claims.create(namespace="default", body={
    "apiVersion": gv, "kind": "ResourceClaim", "metadata": {"name": "py-claim"},
    "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com"}]}]}}})
assert made.spec.devices.requests[0].firstAvailable[0].allocationMode == "ExactCount", made
st = claims.status.patch(namespace="default", name="py-claim",
                         content_type="application/merge-patch+json",
                         body={"status": {"allocation": {"devices": {"results": [
                             {"request": "gpu/big", "driver": "gpu.example.com",
                              "pool": "node-b", "device": "gpu-1"}]}}}})
assert st.status.allocation.devices.results[0].device == "gpu-1", st
try:
    claims.create(namespace="default", body={
        "apiVersion": gv, "kind": "ResourceClaim", "metadata": {"name": "py-bad"},
        "spec": {"devices": {"requests": [{"name": "Bad_Name", "exactly": {
            "deviceClassName": "gpu.example.com"}}]}}})
    raise AssertionError("bad request name accepted")
except exceptions.ApiException as e:
    body = e.body.decode() if isinstance(e.body, bytes) else e.body
    assert e.status == 422 and "spec.devices.requests[0].name" in body, body
claims.delete(namespace="default", name="py-claim")
print("ok")
'''


def check_python_client(up):
    out = run_python_client(up, PYTHON_CLIENT)
    if "ok" not in out:
        raise Fail("python client: " + out[-2000:])


def taint_rule(name, selector, taint):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
            "metadata": {"name": name}, "spec": {"deviceSelector": selector, "taint": taint}}


def check_device_taint_rules(up):
    out = up.kubectl(["explain", "devicetaintrules.spec.deviceSelector"])[1]
    for want in ["driver", "pool", "device"]:
        if want not in out:
            raise Fail("explain devicetaintrules.spec.deviceSelector lacks %s:\n%s" % (want, out))
    rule = taint_rule("maintenance", {"driver": "gpu.example.com", "pool": "node-a"},
                      {"key": "example.com/maintenance", "value": "planned",
                       "effect": "NoSchedule"})
    rule["status"] = {"conditions": [{"type": "Ignored", "status": "True", "reason": "Set",
                                      "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(rule))
    got = get(up, ["devicetaintrule", "maintenance"])
    if not got["spec"]["taint"].get("timeAdded") or got["metadata"].get("generation") != 1:
        raise Fail("not defaulted: %s" % got)
    if got.get("status", {}).get("conditions"):
        raise Fail("status kept on create: %s" % got["status"])
    names = up.kubectl(["get", "devicetaintrules", "-o", "name"])[1].split()
    if names != ["devicetaintrule.resource.k8s.io/maintenance"]:
        raise Fail("list: %s" % names)
    header = up.kubectl(["get", "devicetaintrules"])[1].splitlines()[0].split()
    if header != ["NAME", "AGE"]:
        raise Fail("devicetaintrules header: %s" % header)
    # A new effect with the old time gets a new time; a spec change a new generation.
    up.kubectl(["patch", "devicetaintrule", "maintenance", "--type", "merge", "-p", json.dumps(
        {"spec": {"taint": {"timeAdded": "2020-01-01T00:00:00Z"}}})])
    up.kubectl(["patch", "devicetaintrule", "maintenance", "--type", "merge", "-p", json.dumps(
        {"spec": {"taint": {"effect": "NoExecute"}}})])
    got = get(up, ["devicetaintrule", "maintenance"])
    if got["spec"]["taint"]["timeAdded"] == "2020-01-01T00:00:00Z" or \
            got["metadata"]["generation"] != 3:
        raise Fail("effect change: %s" % got)
    condition = {"type": "EvictionInProgress", "status": "False", "reason": "NotStarted",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}
    up.kubectl(["patch", "devicetaintrule", "maintenance", "--subresource", "status", "--type",
                "merge", "-p", json.dumps({"status": {"conditions": [condition]}})])
    got = get(up, ["devicetaintrule", "maintenance"])
    if [c["type"] for c in got["status"]["conditions"]] != ["EvictionInProgress"]:
        raise Fail("status: %s" % got.get("status"))
    rc, _, err = up.kubectl(["patch", "devicetaintrule", "maintenance", "--subresource",
                             "status", "--type", "merge", "-p", json.dumps(
                                 {"status": {"conditions": [dict(condition, status="Maybe")]}})],
                            check=False)
    if rc == 0 or 'status.conditions[0].status: Unsupported value: "Maybe"' not in err:
        raise Fail("bad condition: rc %d %s" % (rc, err))
    refused(up, taint_rule("bad-effect", {}, {"key": "k", "effect": "Sometimes"}),
            'spec.taint.effect: Unsupported value: "Sometimes"')
    refused(up, taint_rule("no-key", {}, {"effect": "NoSchedule"}), "spec.taint.key")
    refused(up, taint_rule("bad-driver", {"driver": "Not_A_Driver"},
                           {"key": "k", "effect": "NoSchedule"}),
            "spec.deviceSelector.driver: Invalid value")
    # A watch from resourceVersion 0 starts with the stored rules.
    events = up.kubectl(["get", "--raw", "/apis/resource.k8s.io/v1/devicetaintrules?watch=1"
                         "&resourceVersion=0&timeoutSeconds=1"])[1]
    if '"type":"ADDED"' not in events.replace(" ", "") or "maintenance" not in events:
        raise Fail("watch: %s" % events[:500])
    up.kubectl(["delete", "devicetaintrule", "maintenance"])
    rc, out, _ = up.kubectl(["get", "devicetaintrules", "-o", "name"], check=False)
    if out.strip():
        raise Fail("not deleted: %s" % out)


CHECKS = [
    check_discovery,
    check_explain,
    check_examples_apply_and_default,
    check_tables_and_field_selectors,
    check_invalid_refused,
    check_status_subresource,
    check_python_client,
    check_device_taint_rules,
]


def main():
    # The API alone: the resource claim controller would release the reservation this test
    # writes for a pod that does not exist (run_dra_e2e.py covers the whole flow).
    run_against_up(CHECKS, "berth-dra-api-e2e-", demo_nodes=2,
                   extra=["--controllers", "*,-resourceclaim-controller"])


if __name__ == "__main__":
    main()
