// libFuzzer target: protobuf request bodies (application/vnd.kubernetes.protobuf). The input is
// tried as a whole body, and as the `raw` object of an envelope naming one of several kinds
// (the first byte picks it), so the mutations reach the nested messages of pods, nodes and
// workloads without first finding a valid envelope. No input may crash or throw, and what
// decodes must serialise (every string valid UTF-8).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/protobuf.h"
#include "apiserver/protobuf_writer.h"

namespace {

void Decode(std::string_view body) {
  auto obj = berth::apiserver::DecodeProtobufObject(body);
  if (obj.ok()) (void)obj->dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::pair<const char*, const char*> kKinds[] = {
      {"v1", "Pod"},
      {"v1", "Node"},
      {"v1", "Secret"},
      {"v1", "Service"},
      {"v1", "PersistentVolume"},
      {"apps/v1", "Deployment"},
      {"apps/v1", "StatefulSet"},
      {"apps/v1", "ControllerRevision"},
      {"batch/v1", "CronJob"},
      {"events.k8s.io/v1", "Event"},
      {"authorization.k8s.io/v1", "SubjectAccessReview"},
      {"networking.k8s.io/v1", "Ingress"},
  };
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Decode(text);
  if (text.empty()) return 0;
  const auto& [api_version, kind] =
      kKinds[static_cast<uint8_t>(text[0]) % (sizeof(kKinds) / sizeof(kKinds[0]))];
  Decode(berth::apiserver::protobuf_writer::Envelope(api_version, kind, text.substr(1)));
  return 0;
}
