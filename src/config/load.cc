// Reading configuration files: the one dispatch by kind and apiVersion, and the v1 pipeline
// (decode_v1.cc, defaults.cc, validate.cc) every document goes through.
#include "config/load.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "api/codec.h"
#include "api/read_file.h"
#include "config/in_tree_plugins.h"
#include "config/legacy_versions.h"
#include "config/load_stages.h"
#include "config/policy.h"

namespace berth::config {

Result<V1Document> ToV1Document(const nlohmann::json& doc, std::string_view source,
                                const std::string& base_dir, const Registry& registry) {
  V1Document out;
  if (IsPolicy(doc)) {
    // kind Policy (apiVersion v1): predicates and priorities as a v1 profile (policy.h).
    auto translated = TranslatePolicy(doc, source, registry);
    if (!translated.ok()) return translated.error();
    out.doc = std::move(translated->config);
    out.notes = std::move(translated->notes);
    out.translated_from = kPolicyKind;
    return out;
  }
  if (IsLegacyConfigVersion(doc)) {
    // KubeSchedulerConfiguration v1alpha1..v1beta3, with that version's defaults
    // (legacy_versions.h).
    auto translated = TranslateLegacyConfig(doc, source, base_dir, registry);
    if (!translated.ok()) return translated.error();
    out.doc = std::move(translated->config);
    out.notes = std::move(translated->notes);
    out.translated_from = doc.value("apiVersion", "");
    out.policy_configmap_namespace = std::move(translated->policy_configmap_namespace);
    out.policy_configmap_name = std::move(translated->policy_configmap_name);
    return out;
  }
  // v1, or a document whose kind or apiVersion the v1 decoder reports as unsupported.
  out.doc = doc;
  return out;
}

Result<SchedulerConfiguration> DecodeConfiguration(const nlohmann::json& doc,
                                                   const Registry& registry) {
  internal::Problems p;
  auto decoded = internal::DecodeV1(doc, registry, p);
  if (!decoded.ok()) return decoded.error();
  internal::ApplyDefaults(*decoded, registry, p);
  if (!p.ok()) return p.error();
  SchedulerConfiguration& c = decoded->config;
  internal::ValidateConfiguration(c, decoded->profiles, p);
  if (!p.ok()) return p.error();
  internal::ApplyExtenderIgnoredResources(c);
  return std::move(c);
}

Result<SchedulerConfiguration> LoadConfig(std::string_view yaml, std::string_view source,
                                          const Registry& registry) {
  auto docs = ParseDocuments(yaml, source);
  if (!docs.ok()) return docs.error();
  if (docs->size() != 1) {
    return Error{fmt::format("{}: expected one KubeSchedulerConfiguration document, found {}",
                             source, docs->size())};
  }
  const std::string base_dir = std::filesystem::path(std::string(source)).parent_path().string();
  auto v1 = ToV1Document((*docs)[0], source, base_dir, registry);
  if (!v1.ok()) return v1.error();
  auto config = DecodeConfiguration(v1->doc, registry);
  if (!config.ok()) {
    if (v1->translated_from.empty()) {
      return Error{fmt::format("{}: {}", source, config.error().message)};
    }
    return Error{
        fmt::format("{}: translated {}: {}", source, v1->translated_from, config.error().message)};
  }
  config->policy_configmap_namespace = v1->policy_configmap_namespace;
  config->policy_configmap_name = v1->policy_configmap_name;
  return config;
}

Result<SchedulerConfiguration> LoadConfigFile(const std::string& path, const Registry& registry) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) return text.error();
  return LoadConfig(*text, path, registry);
}

}  // namespace berth::config
