"""Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf) for the e2e tests:
a minimal wire-format writer and a pod a client-go program could create, with the JSON it
stands for (written from the Pod reference, not from Berth's decoder)."""


def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def ld(num, data):
    """A length-delimited field: a string, bytes or a nested message."""
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def num(n, v):
    return varint(n << 3) + varint(v & 0xFFFFFFFFFFFFFFFF)


def entry(n, key, value):
    return ld(n, ld(1, key) + ld(2, value))


def envelope(api_version, kind, raw):
    return b"k8s\0" + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw)


def pod(name, node):
    """A pod required onto `node` by node affinity, with volumes, a probe and tolerations;
    returns (body, the spec as JSON)."""
    volumes = (ld(1, ld(1, "scratch") + ld(2, ld(2, ld(1, "") + ld(2, ld(1, "64Mi"))))) +
               ld(1, ld(1, "cfg") + ld(2, ld(19, ld(1, ld(1, "pb-config")) + num(3, 0o644)))))
    probe = (ld(1, ld(2, ld(1, "/healthz") + ld(2, num(1, 0) + num(2, 8080) + ld(3, "")))) +
             num(2, 3) + num(3, 0) + num(4, 5))
    container = (ld(1, "app") + ld(2, "pause") + ld(9, ld(1, "scratch") + num(2, 0) +
                 ld(3, "/scratch") + ld(4, "")) + ld(10, probe))
    affinity = ld(1, ld(1, ld(1, ld(1, ld(1, "kubernetes.io/hostname") + ld(2, "In") +
                                          ld(3, node)))))
    spec = (volumes + ld(2, container) + ld(3, "Never") + num(4, 0) + ld(18, affinity) +
            ld(22, ld(1, "") + ld(2, "Exists") + ld(3, "") + ld(4, "NoExecute") + num(5, 30)))
    body = envelope("v1", "Pod", ld(1, ld(1, name) + entry(11, "app", "pb")) + ld(2, spec))
    expected = {
        "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "64Mi"}},
                    {"name": "cfg", "configMap": {"name": "pb-config", "defaultMode": 420}}],
        "containers": [{"name": "app", "image": "pause",
                        "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                                          "initialDelaySeconds": 3, "periodSeconds": 5}}],
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}},
        "tolerations": [{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
    }
    return body, expected
