#!/usr/bin/python3
"""The official Python client (python3-kubernetes) against `berth up`.

Usage: python_client_check.py KUBECONFIG

Lists nodes, watches pods while creating one for another scheduler, binds it with a Binding,
and patches a node. Exits non-zero with a message on the first failure.
"""
import sys
import threading

from kubernetes import client, config, watch


def main():
    config.load_kube_config(config_file=sys.argv[1])
    v1 = client.CoreV1Api()
    nodes = v1.list_node().items
    if not nodes:
        sys.exit("no nodes listed")
    target = nodes[0].metadata.name

    seen = []
    w = watch.Watch()

    def watcher():
        for ev in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=20):
            seen.append((ev["type"], ev["object"].metadata.name))
            if ev["object"].metadata.name == "py-pod" and ev["object"].spec.node_name:
                w.stop()

    t = threading.Thread(target=watcher)
    t.start()
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="py-pod"),
        spec=client.V1PodSpec(scheduler_name="py-scheduler",
                              containers=[client.V1Container(name="c", image="pause")]))
    v1.create_namespaced_pod("default", pod)
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="py-pod"),
                            target=client.V1ObjectReference(api_version="v1", kind="Node",
                                                            name=target))
    # The generated client cannot decode the Status a binding returns; the call succeeds anyway.
    v1.create_namespaced_binding("default", body, _preload_content=False)
    t.join(timeout=30)
    got = v1.read_namespaced_pod("py-pod", "default")
    if got.spec.node_name != target:
        sys.exit("binding not applied: %r" % got.spec.node_name)
    if ("ADDED", "py-pod") not in seen:
        sys.exit("watch did not deliver ADDED py-pod: %r" % seen)
    v1.patch_node(target, {"metadata": {"labels": {"py": "yes"}}})
    if v1.read_node(target).metadata.labels.get("py") != "yes":
        sys.exit("node patch not applied")
    v1.delete_namespaced_pod("py-pod", "default")
    print("python client ok")


if __name__ == "__main__":
    main()
