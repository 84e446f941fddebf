#include "apiserver/protobuf_schema.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include <cstdio>
#include <cstdlib>

namespace berth::apiserver {
namespace {

namespace pb = google::protobuf;

// berth_options.proto's extension numbers. The options are extensions the library's own
// FieldOptions does not know, so they arrive among its unknown fields.
constexpr int kKeepZero = 51001;
constexpr int kInline = 51002;
constexpr int kJsonList = 51003;

bool HasOption(const pb::Message& options, int number) {
  const pb::UnknownFieldSet& unknown = options.GetReflection()->GetUnknownFields(options);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const pb::UnknownField& f = unknown.field(i);
    if (f.number() == number && f.type() == pb::UnknownField::TYPE_VARINT) return f.varint() != 0;
  }
  return false;
}

// The kinds whose protobuf bodies are read: apiVersion, the proto package of its group, and
// the kinds (each the message of that name). Keep in step with KINDS in
// scripts/gen_k8s_protos.py, which writes the messages these reach.
struct Group {
  const char* api_version;
  const char* package;
  std::initializer_list<const char*> kinds;
};
const Group kGroups[] = {
    {"v1",
     "k8s.io.api.core.v1",
     {"ConfigMap", "Secret", "Namespace", "ServiceAccount", "Service", "Pod", "Binding", "Event",
      "ResourceQuota", "Node", "PersistentVolumeClaim", "PersistentVolume", "Endpoints",
      "LimitRange", "PodTemplate", "ReplicationController"}},
    {"apps/v1",
     "k8s.io.api.apps.v1",
     {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"}},
    {"batch/v1", "k8s.io.api.batch.v1", {"Job", "CronJob"}},
    {"policy/v1", "k8s.io.api.policy.v1", {"PodDisruptionBudget", "Eviction"}},
    {"scheduling.k8s.io/v1", "k8s.io.api.scheduling.v1", {"PriorityClass"}},
    {"coordination.k8s.io/v1", "k8s.io.api.coordination.v1", {"Lease"}},
    {"rbac.authorization.k8s.io/v1",
     "k8s.io.api.rbac.v1",
     {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}},
    {"networking.k8s.io/v1",
     "k8s.io.api.networking.v1",
     {"Ingress", "IngressClass", "NetworkPolicy"}},
    {"events.k8s.io/v1", "k8s.io.api.events.v1", {"Event"}},
    {"authorization.k8s.io/v1",
     "k8s.io.api.authorization.v1",
     {"SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview",
      "LocalSubjectAccessReview"}},
    {"authentication.k8s.io/v1",
     "k8s.io.api.authentication.v1",
     {"SelfSubjectReview", "TokenReview", "TokenRequest"}},
};

// libprotobuf logs an ERROR for each string field that is not UTF-8 as it parses; request
// bodies are the client's, and protobuf.cc replaces such bytes itself, so only fatal messages
// (a broken build) are written.
void FatalOnly(pb::LogLevel level, const char* filename, int line, const std::string& message) {
  if (level == pb::LOGLEVEL_FATAL)
    std::fprintf(stderr, "libprotobuf %s:%d: %s\n", filename, line, message.c_str());
}

}  // namespace

const ProtobufSchema& ProtobufSchema::Get() {
  static const ProtobufSchema* schema = [] {
    pb::SetLogHandler(&FatalOnly);
    auto* s = new ProtobufSchema();
    if (!s->Load(K8sDescriptorSet())) {
      std::fputs("berth: the embedded Kubernetes protobuf descriptors do not load\n", stderr);
      std::abort();
    }
    return s;
  }();
  return *schema;
}

bool ProtobufSchema::Load(std::string_view descriptor_set) {
  pb::FileDescriptorSet set;
  if (!set.ParseFromArray(descriptor_set.data(), static_cast<int>(descriptor_set.size())))
    return false;
  // protoc writes a file after the files it imports, so each builds on what is in the pool.
  for (const pb::FileDescriptorProto& file : set.file()) {
    const pb::FileDescriptor* built = pool_.BuildFile(file);
    if (!built) return false;
    for (int i = 0; i < built->message_type_count(); ++i) ReadOptions(built->message_type(i));
  }
  quantity = Find("k8s.io.apimachinery.pkg.api.resource.Quantity");
  int_or_string = Find("k8s.io.apimachinery.pkg.util.intstr.IntOrString");
  time = Find("k8s.io.apimachinery.pkg.apis.meta.v1.Time");
  micro_time = Find("k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime");
  duration = Find("k8s.io.apimachinery.pkg.apis.meta.v1.Duration");
  fields_v1 = Find("k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1");
  raw_extension = Find("k8s.io.apimachinery.pkg.runtime.RawExtension");
  unknown = Find("k8s.io.apimachinery.pkg.runtime.Unknown");
  if (!quantity || !int_or_string || !time || !micro_time || !duration || !fields_v1 ||
      !raw_extension || !unknown)
    return false;
  for (const Group& g : kGroups) {
    for (const char* kind : g.kinds) {
      const pb::Descriptor* d = Find(std::string(g.package) + "." + kind);
      if (!d) return false;
      kinds_[std::string(g.api_version) + "/" + kind] = d;
    }
  }
  return true;
}

void ProtobufSchema::ReadOptions(const pb::Descriptor* message) {
  if (HasOption(message->options(), kJsonList)) json_list_[message] = true;
  for (int i = 0; i < message->field_count(); ++i) {
    const pb::FieldDescriptor* f = message->field(i);
    ProtobufFieldFlags flags{HasOption(f->options(), kKeepZero), HasOption(f->options(), kInline)};
    if (flags.keep_zero || flags.inline_fields) flags_[f] = flags;
  }
  for (int i = 0; i < message->nested_type_count(); ++i) ReadOptions(message->nested_type(i));
}

const pb::Descriptor* ProtobufSchema::MessageOfKind(std::string_view api_version,
                                                    std::string_view kind) const {
  std::string key(api_version);
  key += '/';
  key += kind;
  auto it = kinds_.find(key);
  return it == kinds_.end() ? nullptr : it->second;
}

const pb::Descriptor* ProtobufSchema::Find(std::string_view full_name) const {
  return pool_.FindMessageTypeByName(std::string(full_name));
}

ProtobufFieldFlags ProtobufSchema::Flags(const pb::FieldDescriptor* field) const {
  auto it = flags_.find(field);
  return it == flags_.end() ? ProtobufFieldFlags{} : it->second;
}

bool ProtobufSchema::JsonList(const pb::Descriptor* message) const {
  return json_list_.count(message) > 0;
}

pb::Message* ProtobufSchema::New(const pb::Descriptor* message, pb::Arena* arena) const {
  return factory_.GetPrototype(message)->New(arena);
}

}  // namespace berth::apiserver
