#include "apiserver/gc_finalizers.h"

#include <fmt/format.h>

#include <algorithm>

#include "apiserver/field_errors.h"

namespace berth::apiserver {

using Json = nlohmann::json;

ApiError BothPropagationsError() {
  return InvalidObject("DeleteOptions.meta.k8s.io", "",
                       {{FieldErrorType::kInvalid, "propagationPolicy",
                         "\"null\": orphanDependents and deletionPropagation cannot be both set"}});
}

Json WithGcFinalizers(const Json& finalizers, const std::string& policy, bool marked) {
  const std::string add =
      policy == "Orphan" ? "orphan" : (policy == "Foreground" ? "foregroundDeletion" : "");
  if (marked && !add.empty()) return finalizers;
  Json out = Json::array();
  for (const auto& f : finalizers) {
    if ((f == "orphan" || f == "foregroundDeletion") && f != add) continue;
    out.push_back(f);
  }
  if (!add.empty() && std::find(out.begin(), out.end(), add) == out.end()) out.push_back(add);
  return out;
}

VoidResult ReadPropagation(const Json& opts, std::optional<std::string>& out) {
  std::optional<std::string> policy;
  if (auto p = opts.find("propagationPolicy"); p != opts.end() && !p->is_null()) {
    const std::string v = p->is_string() ? p->get<std::string>() : p->dump();
    if (v != "Orphan" && v != "Background" && v != "Foreground") {
      return InvalidObject(
          "DeleteOptions.meta.k8s.io", "",
          {{FieldErrorType::kNotSupported, "propagationPolicy",
            fmt::format("\"{}\": supported values: \"Foreground\", \"Background\", "
                        "\"Orphan\", \"nil\"",
                        v)}});
    }
    policy = v;
  }
  if (auto o = opts.find("orphanDependents"); o != opts.end() && o->is_boolean()) {
    if (policy || out) return BothPropagationsError();
    policy = o->get<bool>() ? "Orphan" : "Background";
  }
  if (policy) {
    if (out && *out != *policy) return BothPropagationsError();
    out = policy;
  }
  return {};
}

}  // namespace berth::apiserver
