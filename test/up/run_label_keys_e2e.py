#!/usr/bin/env python3
"""End-to-end tests of matchLabelKeys / mismatchLabelKeys in `berth up`, with the real kubectl
and the official Python client.

Usage: run_label_keys_e2e.py BERTH [CHECK ...]

* a Deployment whose pods have required pod anti-affinity (one per node) and a zone spread
  constraint, both with matchLabelKeys [pod-template-hash]: the created pods carry the keys and
  the merged `pod-template-hash In (<hash>)` requirement (kubectl -o json and the Python
  client read it back); a rolling update with maxSurge 1 on four nodes, all taken by the first
  generation, completes because the two ReplicaSet generations do not count each other;
* the same Deployment without matchLabelKeys: the surge pod stays Pending (anti-affinity
  against the old generation), which shows the check above is not passing by accident;
* a spread constraint (one per node) with matchLabelKeys [rev]: two rev=a pods bound to one
  node do not count for rev=b pods, which take all four nodes, the crowded one included;
* relabelling a pod merges nothing again; mismatchLabelKeys becomes NotIn; invalid keys get
  kube-apiserver's 422 messages through kubectl.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for, run_python_client  # noqa: E402

HASH = "pod-template-hash"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NODES = 4


def apply(up, obj):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))


def pods_of(up, selector):
    out = up.kubectl(["get", "pods", "-l", selector, "-o", "json"])[1]
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def get_pod(up, name):
    return json.loads(up.kubectl(["get", "pod", name, "-o", "json"])[1])


def anti_affinity_deployment(name, keys):
    term = {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": HOST}
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"app": name}}}
    if keys:
        term["matchLabelKeys"] = [HASH]
        spread["matchLabelKeys"] = [HASH]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": NODES, "selector": {"matchLabels": {"app": name}},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1"}],
                                           "affinity": {"podAntiAffinity": {
                                               "requiredDuringSchedulingIgnoredDuringExecution":
                                                   [term]}},
                                           "topologySpreadConstraints": [spread]}}}}


def bound_pods(up, selector, count):
    def ready():
        pods = pods_of(up, selector)
        if len(pods) == count and all(p["spec"].get("nodeName") for p in pods):
            return pods
        return None
    return wait_for("%d bound pods of %s" % (count, selector), ready, timeout=90)


def rollout(up, name):
    up.kubectl(["rollout", "status", "deploy/" + name, "--timeout=90s"], timeout=120)


# The Debian client (22.x) predates matchLabelKeys: it reads the merged selectors all the same,
# which is what a client that does not know the keys needs.
PY_CLIENT = """
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
pod = client.CoreV1Api().read_namespaced_pod(sys.argv[2], "default")
term = pod.spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]
spread = pod.spec.topology_spread_constraints[0]
for sel in (term.label_selector, spread.label_selector):
    e = sel.match_expressions[0]
    print(",".join("%s=%s" % kv for kv in sel.match_labels.items()), e.key, e.operator,
          ",".join(e.values))
"""


def check_deployment_generations_do_not_count_each_other(up):
    apply(up, anti_affinity_deployment("web", keys=True))
    rollout(up, "web")
    first = bound_pods(up, "app=web", NODES)
    if len({p["spec"]["nodeName"] for p in first}) != NODES:
        raise Fail("anti-affinity: %s" % [p["spec"]["nodeName"] for p in first])
    pod = first[0]
    h = pod["metadata"]["labels"][HASH]
    want = [{"key": HASH, "operator": "In", "values": [h]}]
    term = pod["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"][0]
    spread = pod["spec"]["topologySpreadConstraints"][0]
    for what in (term, spread):
        if what["labelSelector"] != {"matchLabels": {"app": "web"}, "matchExpressions": want} \
                or what["matchLabelKeys"] != [HASH]:
            raise Fail("stored selector: %s" % what)
    out = run_python_client(up, PY_CLIENT, pod["metadata"]["name"], timeout=60)
    line = "app=web %s In %s" % (HASH, h)
    if out.splitlines() != [line, line]:
        raise Fail("python client: %r" % out)
    # Every node holds a first-generation pod: the surge pod fits only if it ignores them.
    up.kubectl(["set", "image", "deploy/web", "c=nginx:2"])
    rollout(up, "web")
    second = bound_pods(up, "app=web", NODES)
    hashes = {p["metadata"]["labels"][HASH] for p in second}
    if len(hashes) != 1 or h in hashes or \
            len({p["spec"]["nodeName"] for p in second}) != NODES:
        raise Fail("second generation: %s" % [(p["metadata"]["labels"][HASH],
                                               p["spec"].get("nodeName")) for p in second])


def check_without_keys_the_old_generation_blocks(up):
    apply(up, anti_affinity_deployment("plain", keys=False))
    rollout(up, "plain")
    old = {p["metadata"]["name"] for p in bound_pods(up, "app=plain", NODES)}
    up.kubectl(["set", "image", "deploy/plain", "c=nginx:2"])

    def surge_unschedulable():
        for p in pods_of(up, "app=plain"):
            if p["metadata"]["name"] in old:
                continue
            for c in p.get("status", {}).get("conditions", []):
                if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable":
                    return p
        return None
    p = wait_for("the surge pod unschedulable", surge_unschedulable, timeout=60)
    if p["spec"].get("nodeName"):
        raise Fail("surge pod bound: %s" % p["spec"])
    up.kubectl(["delete", "deploy", "plain", "--wait=false"])


def spread_pod(name, rev, node=None):
    spec = {"containers": [{"name": "c", "image": "nginx:1"}],
            "topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "spread"}}, "matchLabelKeys": ["rev"]}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"app": "spread", "rev": rev}},
            "spec": spec}


def check_spread_counts_only_its_revision(up):
    crowded = "demo-node-001"
    for i in range(2):
        apply(up, spread_pod("old-%d" % i, "a", node=crowded))
    bound_pods(up, "app=spread,rev=a", 2)
    # One at a time, so that each sees the ones before it.
    for i in range(NODES):
        apply(up, spread_pod("new-%d" % i, "b"))
        bound_pods(up, "app=spread,rev=b", i + 1)
    nodes = sorted(p["spec"]["nodeName"] for p in pods_of(up, "app=spread,rev=b"))
    # Counting rev=a too, no rev=b pod could go to the crowded node (skew 3 - 1 > 1).
    if len(set(nodes)) != NODES or crowded not in nodes:
        raise Fail("rev=b pods on %s" % nodes)
    sel = get_pod(up, "new-0")["spec"]["topologySpreadConstraints"][0]["labelSelector"]
    if sel != {"matchLabels": {"app": "spread"},
               "matchExpressions": [{"key": "rev", "operator": "In", "values": ["b"]}]}:
        raise Fail("stored selector: %s" % sel)


def check_updates_do_not_merge_again(up):
    apply(up, {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "tenant-pod", "namespace": "default",
                            "labels": {"app": "t", "tenant": "t1", "rev": "r1"}},
               "spec": {"containers": [{"name": "c", "image": "nginx:1"}],
                        "affinity": {"podAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [{
                                "weight": 10, "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"app": "t"}},
                                    "topologyKey": HOST, "matchLabelKeys": ["rev"],
                                    "mismatchLabelKeys": ["tenant"]}}]}}}})
    want = {"matchLabels": {"app": "t"},
            "matchExpressions": [{"key": "rev", "operator": "In", "values": ["r1"]},
                                 {"key": "tenant", "operator": "NotIn", "values": ["t1"]}]}

    def selector():
        term = get_pod(up, "tenant-pod")["spec"]["affinity"]["podAffinity"][
            "preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
        return term["labelSelector"], term["matchLabelKeys"], term["mismatchLabelKeys"]
    if selector() != (want, ["rev"], ["tenant"]):
        raise Fail("created: %s" % (selector(),))
    up.kubectl(["label", "pod", "tenant-pod", "rev=r2", "tenant=t2", "--overwrite"])
    if get_pod(up, "tenant-pod")["metadata"]["labels"]["rev"] != "r2" or \
            selector() != (want, ["rev"], ["tenant"]):
        raise Fail("after relabelling: %s" % (selector(),))


def check_invalid_keys_are_refused(up):
    term = {"topologyKey": HOST, "matchLabelKeys": [HASH]}
    bad = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "bad", "namespace": "default", "labels": {HASH: "x"}},
           "spec": {"containers": [{"name": "c", "image": "nginx:1"}],
                    "affinity": {"podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}
    path = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    cases = [
        (None, path + ".matchLabelKeys: Forbidden: must not be specified when labelSelector is "
               "not set"),
        ({"matchLabels": {HASH: "x"}},
         path + '[0]: Invalid value: "%s": exists in both matchLabelKeys and labelSelector'
         % HASH),
    ]
    for selector, message in cases:
        if selector is not None:
            term["labelSelector"] = selector
        rc, _, err = up.kubectl(["create", "-f", "-"], stdin=json.dumps(bad), check=False)
        if rc == 0 or 'Pod "bad" is invalid: ' + message not in err:
            raise Fail("kubectl: rc %d: %r" % (rc, err))
    rc, _, _ = up.kubectl(["get", "pod", "bad"], check=False)
    if rc == 0:
        raise Fail("an invalid pod was stored")


CHECKS = [check_deployment_generations_do_not_count_each_other,
          check_without_keys_the_old_generation_blocks,
          check_spread_counts_only_its_revision,
          check_updates_do_not_merge_again,
          check_invalid_keys_are_refused]


def main():
    run_against_up(CHECKS, "berth-label-keys-e2e-", demo_nodes=NODES)


if __name__ == "__main__":
    main()
