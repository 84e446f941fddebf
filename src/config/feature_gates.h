// kube-scheduler's feature gates (--feature-gates): the known gates with their v1.37 defaults,
// stages and locks, and the parsing and validation rules of Kubernetes' component-base
// featuregate package, so that a flag accepted or refused by kube-scheduler is accepted or
// refused here with the same message.
//
// A FeatureGates value is built once on the main thread from the command line and then only
// read; it is handed to the in-tree plugin factories (plugins/registry.h) and the scheduler.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"

namespace berth::config {

// The gates whose behaviour Berth implements; the rest of the table is accepted without effect.
namespace features {
inline constexpr std::string_view kPodLevelResources = "PodLevelResources";
inline constexpr std::string_view kGenericWorkload = "GenericWorkload";
inline constexpr std::string_view kOpportunisticBatching = "OpportunisticBatching";
inline constexpr std::string_view kGangScheduling = "GangScheduling";
inline constexpr std::string_view kStorageCapacityScoring = "StorageCapacityScoring";
inline constexpr std::string_view kSchedulerAsyncPreemption = "SchedulerAsyncPreemption";
inline constexpr std::string_view kSchedulerPopFromBackoffQ = "SchedulerPopFromBackoffQ";
inline constexpr std::string_view kNodeDeclaredFeatures = "NodeDeclaredFeatures";
inline constexpr std::string_view kVolumeLimitScaling = "VolumeLimitScaling";
}  // namespace features

enum class FeatureStage { kAlpha, kBeta, kGA, kDeprecated };

struct FeatureGateSpec {
  std::string_view name;
  bool default_value;
  FeatureStage stage;
  bool lock_to_default = false;
  // Whether setting the gate changes what Berth does (docs/configuration.md lists both kinds).
  bool honoured = false;
};

// Every gate kube-scheduler v1.37 knows, sorted by name; AllAlpha and AllBeta included.
std::span<const FeatureGateSpec> KnownFeatureGates();
// The spec of a gate, or null.
const FeatureGateSpec* FindFeatureGate(std::string_view name);
// A gate that may be enabled only with others enabled (upstream's dependency table).
struct FeatureGateDependency {
  std::string_view feature;
  std::span<const std::string_view> requires_enabled;
};
std::span<const FeatureGateDependency> FeatureGateDependencies();

// "ALPHA", "BETA", "GA" (upstream prints an empty stage), "DEPRECATED".
std::string_view FeatureStageName(FeatureStage stage);

class FeatureGates {
 public:
  // Every gate at its default.
  FeatureGates() = default;

  // Applies one --feature-gates value ("A=true,B=false") over the gates set so far, as the
  // flag's Set does: a repeated flag adds to the earlier ones. On error nothing changes and the
  // message is upstream's ("unrecognized feature gate: X", ...). `warnings` receives upstream's
  // lines for deprecated and GA gates.
  VoidResult Set(std::string_view value, std::vector<std::string>* warnings);

  bool Enabled(std::string_view name) const;
  // The gates given on the command line, as one flag value sorted by name ("" when none).
  std::string FlagValue() const;

 private:
  std::map<std::string, bool, std::less<>> raw_;      // as given, AllAlpha/AllBeta included
  std::map<std::string, bool, std::less<>> enabled_;  // resolved; absent: the default
};

// Parses every --feature-gates occurrence in order. Errors read as the flag parser's:
// `invalid argument "<value>" for "--feature-gates" flag: <reason>`.
Result<FeatureGates> ParseFeatureGatesFlags(const std::vector<std::string>& values,
                                            std::vector<std::string>* warnings);

}  // namespace berth::config
