#!/usr/bin/env python3
"""Generates src/apiserver/openapi_schema_data.cc: the OpenAPI schemas of every kind the embedded
API server serves, from which it builds its /openapi/v2 and /openapi/v3 documents (what
`kubectl explain` prints, what kubectl's client-side apply reads its merge keys from and what it
validates `kind: List` items against).

Source: the same Kubernetes OpenAPI v2 document as scripts/gen_known_fields.py (whose KINDS list
this script shares): every definition reachable from those kinds, with its types, formats,
required fields and x-kubernetes-* extensions. Upstream's descriptions are dropped; the ones
served are Berth's own, from scripts/openapi_descriptions.py (a kind or field without one has
none). The generated file is committed; the build reads nothing from the network. To regenerate:

    python3 scripts/gen_openapi_schemas.py /tmp/swagger.json --source "Kubernetes release-1.36" \
        > src/apiserver/openapi_schema_data.cc

Each definition is stored as compact JSON in the Swagger 2.0 form ("$ref":
"#/definitions/<name>"); the server rewrites references for OpenAPI v3.
"""

import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_known_fields import KINDS, find_definition  # noqa: E402
from openapi_descriptions import COMMON_KIND_FIELDS, DESCRIPTIONS  # noqa: E402

# Keys of a schema kept from upstream: structure, types and the extensions clients read.
KEPT = {"type", "format", "items", "additionalProperties", "properties", "required", "$ref",
        "enum", "x-kubernetes-group-version-kind", "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-patch-merge-key",
        "x-kubernetes-patch-strategy", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string", "x-kubernetes-unions"}


def full_name(short):
    """"core.v1.Pod" -> io.k8s.api.core.v1.Pod; "meta.v1.ObjectMeta" -> apimachinery's."""
    if short.startswith("io.k8s."):
        return short
    if short.startswith("meta.v1."):
        return "io.k8s.apimachinery.pkg.apis." + short
    return "io.k8s.api." + short


def refs_of(schema, out):
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "$ref":
                out.append(v.rsplit("/", 1)[-1])
            elif k not in ("x-kubernetes-group-version-kind", "enum"):
                refs_of(v, out)
    elif isinstance(schema, list):
        for v in schema:
            refs_of(v, out)


def reachable(definitions, roots):
    seen, stack = set(), list(roots)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        if name not in definitions:
            sys.exit(f"gen_openapi_schemas: {name}: referenced but not defined")
        seen.add(name)
        found = []
        refs_of(definitions[name], found)
        stack.extend(found)
    return sorted(seen)


def strip(schema):
    """The schema without upstream's descriptions and keys no client of Berth's reads."""
    out = {}
    for k, v in schema.items():
        if k not in KEPT:
            continue
        if k == "properties":
            v = {name: strip(p) for name, p in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            v = strip(v)
        out[k] = v
    return out


def served_gvks(schema):
    served = {(g, k) for g, k in KINDS}
    return [gvk for gvk in schema.get("x-kubernetes-group-version-kind", [])
            if gvk["version"] == "v1" and (gvk["group"], gvk["kind"]) in served]


def describe(name, schema, texts):
    """Puts Berth's descriptions on the definition and its fields (in place)."""
    for key, text in texts.items():
        if key == "":
            target = schema
        else:
            target = schema.get("properties", {}).get(key)
            if target is None:
                sys.exit(f"gen_openapi_schemas: {name} has no field {key!r} to describe")
        if "$ref" in target or target is schema:
            target["description"] = text
        else:
            # Keep "description" first among a field's keys, as upstream prints it.
            items = list(target.items())
            target.clear()
            target["description"] = text
            target.update(items)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("swagger", help="path of api/openapi-spec/swagger.json")
    ap.add_argument("--source", default="", help="which release the document is from")
    args = ap.parse_args()
    with open(args.swagger, encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    roots = [find_definition(definitions, group, kind) for group, kind in KINDS]
    names = reachable(definitions, roots)

    described = {full_name(k): v for k, v in DESCRIPTIONS.items()}
    unknown = sorted(set(described) - set(names))
    if unknown:
        sys.exit(f"gen_openapi_schemas: descriptions of definitions not served: {unknown}")

    out_defs = []
    for name in names:
        schema = strip(definitions[name])
        gvks = served_gvks(definitions[name])
        schema.pop("x-kubernetes-group-version-kind", None)
        if len(gvks) > 1:
            sys.exit(f"gen_openapi_schemas: {name} is more than one served kind")
        if gvks:
            schema["x-kubernetes-group-version-kind"] = gvks
        texts = dict(described.get(name, {}))
        if gvks:
            for field, text in COMMON_KIND_FIELDS.items():
                if field in schema.get("properties", {}):
                    texts.setdefault(field, text)
        describe(name, schema, texts)
        text = json.dumps(schema, separators=(",", ":"), sort_keys=False, ensure_ascii=False)
        if ')json"' in text:
            sys.exit(f"gen_openapi_schemas: {name}: text would end the raw string")
        group, kind = (gvks[0]["group"], gvks[0]["kind"]) if gvks else ("", "")
        out_defs.append((name, group, kind, text))

    digest = hashlib.sha256("".join(n + t for n, _, _, t in out_defs).encode()).hexdigest()[:16]
    out = []
    w = out.append
    w("// clang-format off")
    w("// Generated by scripts/gen_openapi_schemas.py from api/openapi-spec/swagger.json"
      + (f" ({args.source})" if args.source else "") + " and")
    w("// scripts/openapi_descriptions.py. Do not edit; regenerate.")
    w('#include "apiserver/openapi_schema.h"')
    w("")
    w("namespace berth::apiserver::openapi_schema {")
    w("namespace {")
    w("")
    w("constexpr Definition kDefinitions[] = {")
    for name, group, kind, text in out_defs:
        w(f'{{"{name}", "{group}", "{kind}",\n R"json({text})json"}},')
    w("};")
    w("")
    w("}  // namespace")
    w("")
    w("std::span<const Definition> Definitions() { return kDefinitions; }")
    w("")
    w(f'std::string_view DataHash() {{ return "{digest}"; }}')
    w("")
    w("}  // namespace berth::apiserver::openapi_schema")
    sys.stdout.write("\n".join(out) + "\n")
    sys.stderr.write(f"gen_openapi_schemas: {len(out_defs)} definitions, "
                     f"{sum(len(t) for _, _, _, t in out_defs)} bytes of JSON\n")


if __name__ == "__main__":
    main()
