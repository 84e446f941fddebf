#include "apiserver/name_validation.h"

#include <fmt/format.h>

#include "api/validation.h"
#include "apiserver/selectors.h"
#include "apiserver/validation.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

enum class NameRule { kSubdomain, kLabel, kDns1035Label, kPathSegment };

constexpr size_t kSubdomainMaxLength = 253;
constexpr size_t kLabelMaxLength = 63;
// No rule of kube-apiserver bounds a path-segment name; a longer one could not be addressed
// in a request line here, so those names are held to a subdomain's length.
constexpr size_t kPathSegmentMaxLength = 253;
// A CronJob's name, with the 11 characters its Jobs' names add, must stay a DNS-1035 label.
constexpr size_t kCronJobMaxLength = 52;

NameRule RuleOf(const ResourceInfo& r) {
  if (r.group == "rbac.authorization.k8s.io") return NameRule::kPathSegment;
  if (r.group.empty() && r.plural == "namespaces") return NameRule::kLabel;
  if (r.group.empty() && r.plural == "services") return NameRule::kDns1035Label;
  return NameRule::kSubdomain;
}

std::string PathSegmentProblem(std::string_view name, bool prefix) {
  if (!prefix && (name == "." || name == "..")) return fmt::format("may not be '{}'", name);
  if (name.find('/') != std::string_view::npos) return "may not contain '/'";
  if (name.find('%') != std::string_view::npos) return "may not contain '%'";
  return "";
}

std::string MaxLength(size_t n) { return fmt::format("must be no more than {} characters", n); }

}  // namespace

std::string NameProblem(const ResourceInfo& r, std::string_view name, bool prefix) {
  // A generateName may end in '-': checked as if that were a letter.
  std::string masked(name);
  if (prefix && masked.size() > 1 && masked.back() == '-') masked.back() = 'a';
  switch (RuleOf(r)) {
    case NameRule::kPathSegment:
      if (name.size() > kPathSegmentMaxLength) return MaxLength(kPathSegmentMaxLength);
      return PathSegmentProblem(name, prefix);
    case NameRule::kLabel:
      if (masked.size() > kLabelMaxLength) return MaxLength(kLabelMaxLength);
      if (validation::IsDNS1123Label(masked)) return "";
      return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
             "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
             "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    case NameRule::kDns1035Label:
      if (masked.size() > kLabelMaxLength) return MaxLength(kLabelMaxLength);
      if (validation::IsDNS1035Label(masked)) return "";
      return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
             "with an alphabetic character, and end with an alphanumeric character (e.g. "
             "'my-name',  or 'abc-123', regex used for validation is "
             "'[a-z]([-a-z0-9]*[a-z0-9])?')";
    case NameRule::kSubdomain:
      break;
  }
  if (masked.size() > kSubdomainMaxLength) return MaxLength(kSubdomainMaxLength);
  if (!validation::IsDNS1123Subdomain(masked)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
           "'-' or '.', and must start and end with an alphanumeric character (e.g. "
           "'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  }
  if (!prefix && r.group == "batch" && r.plural == "cronjobs" && name.size() > kCronJobMaxLength) {
    return MaxLength(kCronJobMaxLength);
  }
  return "";
}

VoidResult ValidateNewName(const ResourceInfo& r, const Json& obj) {
  const Json* meta = FieldAt(obj, "metadata");
  if (!meta || !meta->is_object()) return {};
  const std::string name = meta->value("name", "");
  if (!name.empty()) {
    if (std::string p = NameProblem(r, name, false); !p.empty()) {
      return InvalidField(
          r, obj, "metadata.name", FieldErrorType::kInvalid,
          fmt::format("{}: {}", Json(name).dump(-1, ' ', false, Json::error_handler_t::replace),
                      p));
    }
    return {};
  }
  const std::string prefix = meta->value("generateName", "");
  if (prefix.empty()) return {};  // the store answers that one of them is required
  std::string p = NameProblem(r, prefix, true);
  if (p.empty()) {
    // What the prefix generates: its random characters are lower-case letters and digits.
    std::string generated = prefix.substr(0, kMaxGenerateNamePrefix);
    generated.append(kGeneratedSuffixLength, 'x');
    p = NameProblem(r, generated, false);
  }
  if (p.empty()) return {};
  return InvalidField(
      r, obj, "metadata.generateName", FieldErrorType::kInvalid,
      fmt::format("{}: {}", Json(prefix).dump(-1, ' ', false, Json::error_handler_t::replace), p));
}

}  // namespace berth::apiserver
