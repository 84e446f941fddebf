#!/usr/bin/env python3
"""Generates src/apiserver/field_schema_data.cc: the fields of every kind the embedded API server
serves, for its fieldValidation checks (unknown fields are dropped, and reported as warnings or,
with fieldValidation=Strict, rejected).

Source: Kubernetes' OpenAPI v2 document, api/openapi-spec/swagger.json of the kubernetes
repository (the kubernetes Python client carries the same file as kubernetes/swagger.json.unprocessed).
The generated file is committed; the build reads nothing from the network. To regenerate after
upstream adds fields, or after the server starts serving another kind (add it to KINDS below and to
src/apiserver/resources.cc):

    git -C kubernetes show HEAD:api/openapi-spec/swagger.json > /tmp/swagger.json
    python3 scripts/gen_known_fields.py /tmp/swagger.json --source "Kubernetes release-1.36" \
        > src/apiserver/field_schema_data.cc
    clang-format -i src/apiserver/field_schema_data.cc

The schema is reduced to what the unknown-field and type checks need: objects (their Go type
and field names), arrays and maps (their element), typed leaves (string, bool, int32, int64,
number, IntOrString, Quantity, Time, as the Go decoder reads them), untyped leaves and free
subtrees (RawExtension, FieldsV1, x-kubernetes-preserve-unknown-fields: anything below is
accepted).
"""

import argparse
import json
import sys

# (group, kind) of every kind src/apiserver/resources.cc serves, plus the request bodies that are
# not stored kinds (Binding). Version is v1 for all.
KINDS = [
    ("", "Pod"),
    ("", "Binding"),
    ("", "Node"),
    ("", "Namespace"),
    ("", "Event"),
    ("", "Service"),
    ("", "Endpoints"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "ServiceAccount"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("", "ReplicationController"),
    ("", "LimitRange"),
    ("", "PodTemplate"),
    ("", "ResourceQuota"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ControllerRevision"),
    ("coordination.k8s.io", "Lease"),
    ("events.k8s.io", "Event"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSIStorageCapacity"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("policy", "PodDisruptionBudget"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceClaim"),
    ("resource.k8s.io", "ResourceClaimTemplate"),
    ("resource.k8s.io", "ResourceSlice"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "NetworkPolicy"),
]

LEAF, FREE = 0, 1  # node indexes fixed by field_schema.h

# A leaf's OpenAPI (type, format) -> its NodeKind.
SCALARS = {
    ("string", None): "kString",
    ("string", "byte"): "kString",
    ("string", "date-time"): "kTime",
    ("string", "int-or-string"): "kIntOrString",
    ("integer", "int32"): "kInt32",
    ("integer", "int64"): "kInt64",
    ("integer", None): "kInt64",
    ("number", "double"): "kNumber",
    ("number", None): "kNumber",
    ("boolean", None): "kBool",
}


def go_type(definition_name):
    """io.k8s.api.core.v1.NodeStatus -> v1.NodeStatus (the type as Go's decoder names it)."""
    parts = definition_name.split(".")
    return f"{parts[-2]}.{parts[-1]}"


class Builder:
    def __init__(self, definitions):
        self.defs = definitions
        self.nodes = [("kLeaf", 0), ("kFree", 0)]
        self.interned = {}  # ("kArray"|"kMap", element node) -> node
        self.objects = []  # per object: (Go type, sorted [(field name, node)])
        self.def_nodes = {}  # definition name -> node

    def _intern(self, kind, ref):
        key = (kind, ref)
        if key not in self.interned:
            self.nodes.append(key)
            self.interned[key] = len(self.nodes) - 1
        return self.interned[key]

    def schema(self, s):
        if s is True or not isinstance(s, dict) or s.get("x-kubernetes-preserve-unknown-fields"):
            return FREE
        if "$ref" in s:
            return self.definition(s["$ref"].rsplit("/", 1)[-1])
        t = s.get("type")
        if (t, s.get("format")) in SCALARS:
            return self._intern(SCALARS[(t, s.get("format"))], 0)
        if t == "array":
            return self._intern("kArray", self.schema(s.get("items", True)))
        if t == "object" or "properties" in s:
            if "properties" in s:
                return self._object(s)
            if "additionalProperties" in s:
                return self._intern("kMap", self.schema(s["additionalProperties"]))
            return FREE  # an object without a declared shape (RawExtension, FieldsV1)
        return LEAF

    def definition(self, name):
        if name in self.def_nodes:
            return self.def_nodes[name]
        d = self.defs[name]
        if name.endswith(".api.resource.Quantity"):
            # A string in the document; Go decodes a number too.
            self.def_nodes[name] = self._intern("kQuantity", 0)
            return self.def_nodes[name]
        if "properties" in d and not d.get("x-kubernetes-preserve-unknown-fields"):
            # Reserve the node first: a definition may refer to itself.
            self.nodes.append(("kObject", len(self.objects)))
            node = len(self.nodes) - 1
            self.def_nodes[name] = node
            self.objects.append(None)
            self._fill(self.nodes[node][1], d, go_type(name))
            return node
        node = self.schema(d)
        self.def_nodes[name] = node
        return node

    def _object(self, s):
        self.nodes.append(("kObject", len(self.objects)))
        node = len(self.nodes) - 1
        self.objects.append(None)
        self._fill(self.nodes[node][1], s, "struct")
        return node

    def _fill(self, index, s, go):
        fields = []
        for fname in sorted(s["properties"], key=lambda n: n.encode()):
            fields.append((fname, self.schema(s["properties"][fname])))
        self.objects[index] = (go, fields)


def find_definition(definitions, group, kind):
    for name, d in definitions.items():
        for gvk in d.get("x-kubernetes-group-version-kind", []):
            if gvk["group"] == group and gvk["version"] == "v1" and gvk["kind"] == kind:
                # A kind is listed on its own definition and on the shared DeleteOptions-like
                # ones; the kind's own definition has a "metadata" or "kind" property.
                if "properties" in d and "kind" in d["properties"]:
                    return name
    sys.exit(f"gen_known_fields: {group or 'core'}/v1 {kind}: no definition in the document")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("swagger", help="path of api/openapi-spec/swagger.json")
    ap.add_argument("--source", default="", help="which release the document is from")
    args = ap.parse_args()
    with open(args.swagger, encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    b = Builder(definitions)
    roots = [(group, kind, b.definition(find_definition(definitions, group, kind)))
             for group, kind in KINDS]

    out = []
    w = out.append
    w("// Generated by scripts/gen_known_fields.py from api/openapi-spec/swagger.json"
      + (f" ({args.source})" if args.source else "") + ". Do not edit; regenerate.")
    w('#include "apiserver/field_schema.h"')
    w("")
    w("namespace berth::apiserver::field_schema {")
    w("namespace {")
    w("")
    w("constexpr Node kNodes[] = {")
    w(",".join(f"{{NodeKind::{k},{r}}}" for k, r in b.nodes))
    w("};")
    w("")
    first = 0
    objects = []
    fields = []
    for go, obj in b.objects:
        objects.append((first, len(obj), go))
        fields.extend(obj)
        first += len(obj)
    w("constexpr Field kFields[] = {")
    w(",".join(f'{{"{n}",{node}}}' for n, node in fields))
    w("};")
    w("")
    w("constexpr ObjectType kObjects[] = {")
    w(",".join(f'{{{a},{n},"{go}"}}' for a, n, go in objects))
    w("};")
    w("")
    w("constexpr KindRoot kKinds[] = {")
    w(",".join(f'{{"{g}","{k}",{node}}}' for g, k, node in roots))
    w("};")
    w("")
    w("}  // namespace")
    w("")
    w("const Tables& Schema() {")
    w("  static constexpr Tables kTables{kNodes, kFields, kObjects, kKinds};")
    w("  return kTables;")
    w("}")
    w("")
    w("}  // namespace berth::apiserver::field_schema")
    sys.stdout.write("\n".join(out) + "\n")
    sys.stderr.write(f"gen_known_fields: {len(roots)} kinds, {len(b.objects)} object types, "
                     f"{len(fields)} fields, {len(b.nodes)} nodes\n")


if __name__ == "__main__":
    main()
