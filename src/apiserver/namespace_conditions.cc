#include "apiserver/namespace_conditions.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// One of the deletion conditions, with what it says when nothing is wrong.
struct ConditionType {
  const char* type;
  const char* ok_reason;
  const char* ok_message;
};
constexpr ConditionType kTypes[] = {
    {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
     "All resources successfully discovered"},
    {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"},
    {"NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"},
    {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
    {"NamespaceFinalizersRemaining", "ContentHasNoFinalizers",
     "All content-preserving finalizers finished"},
};

struct Failing {
  std::string reason;
  std::string message;
};

// "<key><between><count><after>" for each nonzero count, sorted as text (not by key), joined
// with ", ": the lines sort the same on every pass, so an unchanged state writes nothing.
std::string Counted(const std::map<std::string, int64_t>& counts, std::string_view between,
                    std::string_view after) {
  std::vector<std::string> parts;
  for (const auto& [key, n] : counts) {
    if (n != 0) parts.push_back(fmt::format("{}{}{}{}", key, between, n, after));
  }
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What `left` makes of `type`: nothing when all is well there.
std::optional<Failing> FailingFor(std::string_view type, const NamespaceContentLeft& left) {
  if (type == "NamespaceDeletionContentFailure" && !left.failures.empty()) {
    std::vector<std::string> sorted = left.failures;
    std::sort(sorted.begin(), sorted.end());
    return Failing{"ContentDeletionFailed",
                   fmt::format("Failed to delete all resource types, {} remaining: {}",
                               sorted.size(), fmt::join(sorted, ", "))};
  }
  if (type == "NamespaceContentRemaining" && !left.per_resource.empty()) {
    return Failing{"SomeResourcesRemain",
                   "Some resources are remaining: " +
                       Counted(left.per_resource, " has ", " resource instances")};
  }
  if (type == "NamespaceFinalizersRemaining" && !left.per_finalizer.empty()) {
    return Failing{"SomeFinalizersRemain",
                   "Some content in the namespace has finalizers remaining: " +
                       Counted(left.per_finalizer, " in ", " resource instances")};
  }
  return std::nullopt;
}

}  // namespace

int64_t NamespaceContentLeft::Total() const {
  int64_t total = 0;
  for (const auto& [resource, n] : per_resource) total += n;
  return total;
}

std::string UnexpectedContentMessage(std::string_view ns, std::string_view group,
                                     std::string_view version, std::string_view plural) {
  return fmt::format("unexpected items still remain in namespace: {} for gvr: {}/{}, Resource={}",
                     ns, group, version, plural);
}

bool UpdateNamespaceDeletionConditions(Json& status, const NamespaceContentLeft& left,
                                       std::string_view now) {
  if (!status.is_object()) status = Json::object();
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  bool changed = false;
  for (const ConditionType& c : kTypes) {
    const std::optional<Failing> failing = FailingFor(c.type, left);
    const std::string state = failing ? "True" : "False";
    const std::string reason = failing ? failing->reason : c.ok_reason;
    const std::string message = failing ? failing->message : c.ok_message;
    auto old = std::find_if(conditions.begin(), conditions.end(), [&](const Json& existing) {
      return existing.is_object() && existing.value("type", "") == c.type;
    });
    if (old == conditions.end()) {
      conditions.push_back({{"type", c.type},
                            {"status", state},
                            {"lastTransitionTime", now},
                            {"reason", reason},
                            {"message", message}});
      changed = true;
      continue;
    }
    if (old->value("status", "") == state && old->value("reason", "") == reason &&
        old->value("message", "") == message) {
      continue;
    }
    // The time says when the status last flipped, not when the message last changed.
    if (old->value("status", "") != state) (*old)["lastTransitionTime"] = now;
    (*old)["status"] = state;
    (*old)["reason"] = reason;
    (*old)["message"] = message;
    changed = true;
  }
  return changed;
}

}  // namespace berth::apiserver
