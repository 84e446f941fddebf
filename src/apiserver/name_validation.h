// Validation of object names, by each kind's rule as kube-apiserver's validation applies it: a
// DNS-1123 subdomain for most kinds, a DNS-1123 label for namespaces, a DNS-1035 label for
// services, a path segment for RBAC kinds. A name that passed would be stored and then could not
// be addressed in a URL (`a/b`, `..`) or would break the clients that rely on the rule.
//
// Threads: pure functions, any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// The generated part of a generateName name: the prefix is cut to 58 characters and 5 random
// characters are appended, as kube-apiserver's name generator does.
inline constexpr size_t kMaxGenerateNamePrefix = 58;
inline constexpr size_t kGeneratedSuffixLength = 5;

// Why `name` is not a valid name of resource `r` (kube-apiserver's words); empty when it is.
// `prefix`: the name is a generateName, which may end in '-'.
std::string NameProblem(const ResourceInfo& r, std::string_view name, bool prefix);

// 422 naming metadata.name or metadata.generateName when the name a create would store is not
// valid for `r`: the name, or the generateName and what it generates.
VoidResult ValidateNewName(const ResourceInfo& r, const nlohmann::json& obj);

}  // namespace berth::apiserver
