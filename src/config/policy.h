// The legacy scheduling Policy (kind: Policy, apiVersion: v1; kube-scheduler's
// --policy-config-file, removed upstream in 1.23), translated into the equivalent
// kubescheduler.config.k8s.io/v1 configuration with the mapping kube-scheduler last used
// (the in-tree table, in_tree_plugins.h):
// predicates become filter plugins, priorities score plugins with the policy's weights, the
// legacy extender spelling the v1 one.
//
// The translation is a v1 document (what `berth config convert` prints, with a note per
// translated, defaulted or dropped item), so a Policy runs exactly as its printed equivalent.
// Errors name the source and the entry ("policy.json: predicates[2].name: unknown predicate
// \"Foo\"").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace berth::config {

inline constexpr std::string_view kPolicyKind = "Policy";

struct PolicyTranslation {
  nlohmann::json config;           // a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration
  std::vector<std::string> notes;  // one line per translated, defaulted or dropped item
};

// True for a document of kind Policy.
bool IsPolicy(const nlohmann::json& doc);

// Translates a parsed Policy document. `registry` resolves custom predicate and priority names
// (plugins registered under them).
Result<PolicyTranslation> TranslatePolicy(const nlohmann::json& doc, std::string_view source,
                                          const Registry& registry);

// True if the file holds a single document of kind Policy (false when unreadable).
bool IsPolicyFile(const std::string& path);

// Reads a Policy file (JSON or YAML) and translates it.
Result<PolicyTranslation> TranslatePolicyFile(const std::string& path, const Registry& registry);

}  // namespace berth::config
