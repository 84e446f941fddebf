// The Kubernetes messages protobuf.cc decodes: the descriptors compiled from
// src/apiserver/proto/*.proto at build time (protoc's descriptor set, embedded in the binary),
// loaded once into a DescriptorPool, with each field's JSON options (berth_options.proto) read
// into flags and the message of each kind a body may carry.
//
// Threads: Get() builds the schema on first use; after that every member is read-only and
// DynamicMessageFactory::GetPrototype is thread-safe.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace berth::apiserver {

// The embedded descriptor set (generated k8s_descriptors.cc).
std::string_view K8sDescriptorSet();

struct ProtobufFieldFlags {
  bool keep_zero = false;      // a zero scalar on the wire is written to JSON
  bool inline_fields = false;  // the sub-message's fields go into the enclosing object
};

class ProtobufSchema {
 public:
  // The schema of the embedded descriptor set; aborts if the set does not load (a build error).
  static const ProtobufSchema& Get();

  // The message of a kind (apiVersion, kind), or null when protobuf bodies of it are not read.
  const google::protobuf::Descriptor* MessageOfKind(std::string_view api_version,
                                                    std::string_view kind) const;
  const google::protobuf::Descriptor* Find(std::string_view full_name) const;
  ProtobufFieldFlags Flags(const google::protobuf::FieldDescriptor* field) const;
  bool JsonList(const google::protobuf::Descriptor* message) const;
  // A new, empty message of the type, owned by the arena.
  google::protobuf::Message* New(const google::protobuf::Descriptor* message,
                                 google::protobuf::Arena* arena) const;

  // The messages whose JSON is not their fields.
  const google::protobuf::Descriptor* quantity = nullptr;
  const google::protobuf::Descriptor* int_or_string = nullptr;
  const google::protobuf::Descriptor* time = nullptr;
  const google::protobuf::Descriptor* micro_time = nullptr;
  const google::protobuf::Descriptor* duration = nullptr;
  const google::protobuf::Descriptor* fields_v1 = nullptr;
  const google::protobuf::Descriptor* raw_extension = nullptr;
  const google::protobuf::Descriptor* unknown = nullptr;  // the envelope

  // Builds from a serialized FileDescriptorSet; false when it does not parse or build.
  bool Load(std::string_view descriptor_set);

 private:
  void ReadOptions(const google::protobuf::Descriptor* message);

  google::protobuf::DescriptorPool pool_;
  mutable google::protobuf::DynamicMessageFactory factory_{&pool_};
  std::unordered_map<const google::protobuf::FieldDescriptor*, ProtobufFieldFlags> flags_;
  std::unordered_map<const google::protobuf::Descriptor*, bool> json_list_;
  std::map<std::string, const google::protobuf::Descriptor*> kinds_;  // "apiVersion/kind"
};

}  // namespace berth::apiserver
