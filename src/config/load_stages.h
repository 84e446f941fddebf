// The stages of loading a v1 configuration, shared by the files that implement them (not part
// of the configuration API; see load.h):
//
//   decode_v1.cc  strict decoding of a kubescheduler.config.k8s.io/v1 document into the model,
//                 the file's plugin sets kept as written
//   defaults.cc   kube-scheduler's defaulting: the default profile and plugins (from
//                 in_tree_plugins.h), profile names, defaulted plugin args
//   merge.cc      the merge of a file's plugin sets into the defaults
//   validate.cc   validation of the defaulted configuration
//   encode.cc     the model as a v1 document; yaml_text.cc renders documents as YAML
//   load.cc       reading files and the dispatch by kind and apiVersion
//
// Each stage reports its first problem through `Problems` (decode_util.h). Plain functions over
// values: any thread may call them.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/decode_util.h"
#include "config/types.h"

namespace berth::config::internal {

struct ExtensionPoint {
  std::string_view key;
  PluginSet Plugins::*set;
};

// The `plugins` keys in the order kube-scheduler lists them; multiPoint last.
inline constexpr ExtensionPoint kExtensionPoints[] = {
    {"preEnqueue", &Plugins::pre_enqueue},
    {"queueSort", &Plugins::queue_sort},
    {"preFilter", &Plugins::pre_filter},
    {"filter", &Plugins::filter},
    {"postFilter", &Plugins::post_filter},
    {"preScore", &Plugins::pre_score},
    {"score", &Plugins::score},
    {"reserve", &Plugins::reserve},
    {"permit", &Plugins::permit},
    {"preBind", &Plugins::pre_bind},
    {"bind", &Plugins::bind},
    {"postBind", &Plugins::post_bind},
    {"multiPoint", &Plugins::multi_point},
};

struct DecodedProfile {
  // Before defaulting `profile.plugins` is empty and `scheduler_name` is the file's.
  Profile profile;
  Plugins custom;  // the file's plugin sets before merging, for messages naming them
  bool name_given = false;
};

struct DecodedConfiguration {
  SchedulerConfiguration config;  // `profiles` is filled by ApplyDefaults
  std::vector<DecodedProfile> profiles;
};

// Decodes a v1 document. A wrong apiVersion or kind is returned as the error (nothing else can
// be read then); every other problem goes to `p`.
Result<DecodedConfiguration> DecodeV1(const nlohmann::json& doc, const Registry& registry,
                                      Problems& p);

// Defaulting after decoding: one profile when the file has none, the default scheduler name
// for a single unnamed profile, the default plugins merged with the file's, and defaulted args
// for every enabled plugin with a decoder and no pluginConfig entry. Fills `decoded.config`'s
// profiles.
void ApplyDefaults(DecodedConfiguration& decoded, const Registry& registry, Problems& p);

// Validation of a defaulted configuration; `decoded` gives the file's own plugin sets.
void ValidateConfiguration(const SchedulerConfiguration& c,
                           const std::vector<DecodedProfile>& decoded, Problems& p);

// After validation: extended resources an extender manages with ignoredByScheduler are not
// checked by NodeResourcesFit.
void ApplyExtenderIgnoredResources(SchedulerConfiguration& c);

// A pluginConfig entry's args as JSON (typed args encoded, raw args as given), or null.
nlohmann::json EncodeArgs(const PluginConfig& config);

}  // namespace berth::config::internal
