#!/usr/bin/env python3
"""Writes src/apiserver/proto/*.proto: the Kubernetes messages Berth's API server decodes from
protobuf request bodies (src/apiserver/protobuf.cc), reduced to what the kinds in KINDS reach.

Reads a checkout of k8s.io/api and k8s.io/apimachinery: each package's generated.proto for the
messages (names, field types and numbers: the wire format) and its types.go for how the Go
structs serialise to JSON, which the .proto files carry as options (berth_options.proto):
  keep_zero   the Go field is a pointer, or its JSON tag has no omitempty: a zero value sent on the
              wire is data, not an absent field;
  inline      an embedded Go struct: its fields are the enclosing JSON object's;
  json_list   a named Go slice (`type ExtraValue []string`): JSON is the list itself;
  json_name   where the JSON tag differs from the proto field name.

Run it when moving to a newer Kubernetes API and review the diff:
  scripts/gen_k8s_protos.py --api ~/src/api --apimachinery ~/src/apimachinery
"""
import argparse
import collections
import glob
import os
import re
import sys

# The kinds a protobuf body may carry: (apiVersion, kind) -> message. Keep in step with
# kKinds in src/apiserver/protobuf.cc.
KINDS = """v1 ConfigMap core|v1 Secret core|v1 Namespace core|v1 ServiceAccount core
v1 Service core|v1 Pod core|v1 Binding core|v1 Event core|v1 ResourceQuota core|v1 Node core
v1 PersistentVolumeClaim core|v1 PersistentVolume core|v1 Endpoints core|v1 LimitRange core
v1 PodTemplate core|v1 ReplicationController core
apps/v1 Deployment apps|apps/v1 ReplicaSet apps|apps/v1 StatefulSet apps
apps/v1 DaemonSet apps|apps/v1 ControllerRevision apps
batch/v1 Job batch|batch/v1 CronJob batch
policy/v1 PodDisruptionBudget policy|policy/v1 Eviction policy
scheduling.k8s.io/v1 PriorityClass scheduling|coordination.k8s.io/v1 Lease coordination
rbac.authorization.k8s.io/v1 Role rbac|rbac.authorization.k8s.io/v1 ClusterRole rbac
rbac.authorization.k8s.io/v1 RoleBinding rbac|rbac.authorization.k8s.io/v1 ClusterRoleBinding rbac
networking.k8s.io/v1 Ingress networking|networking.k8s.io/v1 IngressClass networking
networking.k8s.io/v1 NetworkPolicy networking|events.k8s.io/v1 Event events
authorization.k8s.io/v1 SelfSubjectAccessReview authorization
authorization.k8s.io/v1 SelfSubjectRulesReview authorization
authorization.k8s.io/v1 SubjectAccessReview authorization
authorization.k8s.io/v1 LocalSubjectAccessReview authorization
authentication.k8s.io/v1 SelfSubjectReview authentication
authentication.k8s.io/v1 TokenReview authentication
authentication.k8s.io/v1 TokenRequest authentication"""

API_GROUPS = ["core", "apps", "batch", "policy", "scheduling", "coordination", "rbac",
              "networking", "events", "authorization", "authentication"]
MACHINERY = {"k8s.io.apimachinery.pkg.apis.meta.v1": "pkg/apis/meta/v1",
             "k8s.io.apimachinery.pkg.api.resource": "pkg/api/resource",
             "k8s.io.apimachinery.pkg.util.intstr": "pkg/util/intstr",
             "k8s.io.apimachinery.pkg.runtime": "pkg/runtime"}
# Messages protobuf.cc converts by hand (their JSON is not their fields); written as they are.
SPECIAL = {
    "k8s.io.apimachinery.pkg.api.resource.Quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "k8s.io.apimachinery.pkg.runtime.RawExtension",
    "k8s.io.apimachinery.pkg.runtime.TypeMeta",
    "k8s.io.apimachinery.pkg.runtime.Unknown",
}
# Alpha-only messages from API groups Berth does not serve; fields of these types are dropped.
SKIP = {"k8s.io.api.batch.v1.JobSchedulingConfiguration"}
FILE_NAMES = {"k8s.io.apimachinery.pkg.apis.meta.v1": "meta_v1",
              "k8s.io.apimachinery.pkg.runtime": "runtime",
              "k8s.io.apimachinery.pkg.api.resource": "resource",
              "k8s.io.apimachinery.pkg.util.intstr": "intstr"}
MAX_LINES = 720  # a package's messages are split into files of about this many lines
SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"}

Field = collections.namedtuple("Field", "label type name number")  # type: tuple for maps
GoField = collections.namedtuple("GoField", "pointer json_name omitempty inline")


def package_dirs(api, machinery):
  dirs = {f"k8s.io.api.{g}.v1": os.path.join(api, g, "v1") for g in API_GROUPS}
  dirs.update({pkg: os.path.join(machinery, sub) for pkg, sub in MACHINERY.items()})
  return dirs


def read_messages(pkg, path):
  """The messages of one generated.proto: full name -> [Field]."""
  text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
  messages, current = {}, None

  def resolve(t):
    if t in SCALARS:
      return t
    return t[1:] if t.startswith(".") else f"{pkg}.{t}"

  for line in text.split("\n"):
    s = line.split("//")[0].strip()
    if m := re.match(r"message (\w+) \{", s):
      current = f"{pkg}.{m.group(1)}"
      messages[current] = []
    elif s == "}":
      current = None
    elif current and (m := re.match(r"(optional|repeated) ([\w.]+) (\w+) = (\d+);", s)):
      messages[current].append(
          Field(m.group(1), resolve(m.group(2)), m.group(3), int(m.group(4))))
    elif current and (m := re.match(r"map<(\w+), ?([\w.]+)> (\w+) = (\d+);", s)):
      messages[current].append(Field("map", (resolve(m.group(1)), resolve(m.group(2))),
                                     m.group(3), int(m.group(4))))
    elif current and s:
      sys.exit(f"{path}: cannot read '{s}' in {current}")
  return messages


def read_go(directory):
  """The Go types of one package: struct name -> {number: GoField}, and type name -> definition."""
  structs, types = {}, {}
  for path in glob.glob(os.path.join(directory, "*.go")):
    if path.endswith("_test.go") or os.path.basename(path).startswith(("generated", "zz_")):
      continue
    src = open(path).read()
    for m in re.finditer(r"^type (\w+) (.*)$", src, flags=re.M):
      types[m.group(1)] = m.group(2)
    for m in re.finditer(r"^type (\w+) struct \{\n(.*?)^\}", src, flags=re.M | re.S):
      fields = {}
      for line in m.group(2).split("\n"):
        s = line.strip()
        if s.startswith("//") or "`" not in s:
          continue
        head, tag = s.split("`")[0].split(), s.split("`")[1]
        proto = re.search(r'protobuf:"[a-z0-9]+,(\d+),', tag)
        if not proto:
          continue
        js = re.search(r'json:"([^"]*)"', tag)
        parts = (js.group(1) if js else "").split(",")
        embedded = len(head) == 1
        fields[int(proto.group(1))] = GoField(
            pointer=head[-1].startswith("*"), json_name=parts[0],
            omitempty="omitempty" in parts[1:] or "omitzero" in parts[1:],
            inline="inline" in parts[1:] or (embedded and parts[0] == ""))
      structs[m.group(1)] = fields
  return structs, types


def closure(messages, roots):
  order, seen = [], set()

  def visit(name):
    if name in seen or name in SKIP:
      return
    seen.add(name)
    if name not in messages:
      return  # a message of a package not read: the fields using it are dropped
    if name not in SPECIAL:
      for f in messages[name]:
        for t in f.type if f.label == "map" else (f.type,):
          if t not in SCALARS:
            visit(t)
    order.append(name)

  for r in roots:
    visit(r)
  return [n for n in order if n in messages]


def options(go, pkg, message, f):
  """The field's options from its Go struct field."""
  if f"{pkg}.{message}" in SPECIAL:
    return []
  g = go.get(pkg, ({}, {}))[0].get(message, {}).get(f.number)
  if g is None:
    return []
  out = []
  if g.inline:
    return ["(berth.inline) = true"]
  if g.json_name and g.json_name != f.name:
    out.append(f'json_name = "{g.json_name}"')
  if f.label == "optional" and f.type in SCALARS and (g.pointer or not g.omitempty):
    out.append("(berth.keep_zero) = true")
  return out


def split_files(order):
  by_pkg = collections.OrderedDict()
  for n in order:
    by_pkg.setdefault(n.rsplit(".", 1)[0], []).append(n)
  return by_pkg


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--api", required=True, help="a checkout of k8s.io/api")
  ap.add_argument("--apimachinery", required=True, help="a checkout of k8s.io/apimachinery")
  ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "src",
                                                  "apiserver", "proto"))
  args = ap.parse_args()
  messages, go = {}, {}
  for pkg, d in package_dirs(args.api, args.apimachinery).items():
    messages.update(read_messages(pkg, os.path.join(d, "generated.proto")))
    go[pkg] = read_go(d)
  roots = []
  for line in KINDS.replace("\n", "|").split("|"):
    _, kind, group = line.split()
    roots.append(f"k8s.io.api.{group}.v1.{kind}")
  order = closure(messages, sorted(roots) + sorted(SPECIAL))
  file_of, files = {}, collections.OrderedDict()
  for pkg, names in split_files(order).items():
    base = FILE_NAMES.get(pkg) or pkg.split(".")[3] + "_v1"
    chunks, size = [[]], 0
    for n in names:
      if size + len(messages[n]) + 2 > MAX_LINES and chunks[-1]:
        chunks.append([])
        size = 0
      chunks[-1].append(n)
      size += len(messages[n]) + 2
    for i, chunk in enumerate(chunks):
      name = base + ("" if len(chunks) == 1 else f"_{i + 1}") + ".proto"
      files[name] = (pkg, chunk)
      file_of.update({n: name for n in chunk})
  for name, (pkg, chunk) in files.items():
    write_file(os.path.join(args.out, name), pkg, chunk, messages, go, file_of)


def write_file(path, pkg, chunk, messages, go, file_of):
  body, imports = [], set()

  def ref(t):
    if t in SCALARS:
      return t
    return t.rsplit(".", 1)[1] if t.rsplit(".", 1)[0] == pkg else "." + t

  for n in chunk:
    short = n.rsplit(".", 1)[1]
    body.append(f"message {short} {{")
    if go.get(pkg, ({}, {}))[1].get(short, "").startswith("[]"):
      body.append("  option (berth.json_list) = true;")
    for f in messages[n]:
      types = f.type if f.label == "map" else (f.type,)
      if any(t not in SCALARS and t not in file_of for t in types):
        continue
      imports.update(file_of[t] for t in types if t not in SCALARS and file_of[t] != file_of[n])
      if f.label == "map":
        decl = f"map<{ref(f.type[0])}, {ref(f.type[1])}> {f.name} = {f.number}"
      else:
        decl = f"{f.label} {ref(f.type)} {f.name} = {f.number}"
      opts = options(go, pkg, short, f)
      body.append(f"  {decl}{' [' + ', '.join(opts) + ']' if opts else ''};")
    body.append("}")
  out = ["// Written by scripts/gen_k8s_protos.py: Kubernetes' wire format for the messages of",
         f"// {pkg} that Berth decodes, with how each field serialises to JSON.",
         'syntax = "proto2";', "", f"package {pkg};", ""]
  if any("berth." in b for b in body):
    out.append('import "berth_options.proto";')
  out += [f'import "{i}";' for i in sorted(imports)]
  out += [""] + body
  with open(path, "w") as fh:
    fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
  main()
