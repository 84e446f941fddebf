#include "apiserver/pod_deletion.h"

#include "api/codec.h"

namespace berth::apiserver {

namespace {

int64_t IntAt(const nlohmann::json& obj, const char* key, int64_t fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

std::string StringAt(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const nlohmann::json& ObjectAt(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

GraceDecision PodGraceDecision(const nlohmann::json& pod, std::optional<int64_t> requested,
                               int64_t now) {
  if (requested && *requested < 0) requested = 1;
  const nlohmann::json& meta = ObjectAt(pod, "metadata");
  if (meta.contains("deletionTimestamp")) {
    const int64_t current = IntAt(meta, "deletionGracePeriodSeconds", 0);
    // Marked with no grace (finalizers hold it), or a request for none: delete now.
    if (current <= 0 || (requested && *requested == 0)) return {};
    if (!requested || *requested >= current) {
      return {
          .action = GraceDecision::kPending, .grace_seconds = current, .deletion_timestamp = {}};
    }
    // Only a shorter grace period may be asked for; the deadline moves up by the difference.
    auto marked = ParseTimestamp(StringAt(meta, "deletionTimestamp"));
    const int64_t deadline = (marked.ok() ? *marked : now + current) - current + *requested;
    return {.action = GraceDecision::kMark,
            .grace_seconds = *requested,
            .deletion_timestamp = FormatTimestamp(deadline)};
  }
  const nlohmann::json& spec = ObjectAt(pod, "spec");
  int64_t grace = requested.value_or(IntAt(spec, "terminationGracePeriodSeconds", 30));
  // No kubelet runs a pod that is on no node, nor one that has finished: nothing to wait for.
  const std::string phase = StringAt(ObjectAt(pod, "status"), "phase");
  if (StringAt(spec, "nodeName").empty() || phase == "Succeeded" || phase == "Failed") grace = 0;
  if (grace <= 0) return {};
  return {.action = GraceDecision::kMark,
          .grace_seconds = grace,
          .deletion_timestamp = FormatTimestamp(now + grace)};
}

}  // namespace berth::apiserver
