// Kubernetes name validation rules shared by selectors, resource names and decoding.
#pragma once

#include <string>
#include <string_view>

namespace berth::validation {

// A label key or other qualified name: [prefix/]name, where prefix is a DNS-1123 subdomain and
// name is at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
bool IsQualifiedName(std::string_view s);
// A label value: empty, or at most 63 characters shaped like a qualified name's name part.
bool IsValidLabelValue(std::string_view s);
// Lowercase DNS-1123 subdomain of at most 253 characters.
bool IsDNS1123Subdomain(std::string_view s);
// Lowercase DNS-1123 label ([a-z0-9]([-a-z0-9]*[a-z0-9])?) of at most 63 characters.
bool IsDNS1123Label(std::string_view s);
// DNS-1035 label ([a-z]([-a-z0-9]*[a-z0-9])?) of at most 63 characters.
bool IsDNS1035Label(std::string_view s);

// What is wrong with a qualified name or a label value, in kube-apiserver's words; empty when
// it is valid.
std::string QualifiedNameProblem(std::string_view name);
std::string LabelValueProblem(std::string_view value);

}  // namespace berth::validation
