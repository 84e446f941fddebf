// Kubernetes component versions ("1.37.0", "v1.37.2", "1.39.0-alpha.2.39+049eafd34dfbd2"), read
// and ordered as Kubernetes' own components read and order them (the version package of
// apimachinery): a leading 'v' and surrounding blanks are allowed; a semantic version has
// exactly three numeric components, an optional pre-release and optional build metadata; a
// generic one has two or more components and whatever follows them is ignored.
//
// Ordering: components numerically (missing ones count as zero); then, when both are semantic,
// a release above any of its pre-releases, and pre-releases identifier by identifier (numbers
// numerically, otherwise byte order, the longer list above its prefix). Build metadata never
// counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth {

struct KubeVersion {
  std::vector<uint64_t> components;
  bool semantic = false;
  std::string pre_release;     // without the '-'
  std::string build_metadata;  // without the '+'
};

// Exactly three components, with pre-release and build metadata checked.
std::optional<KubeVersion> ParseSemanticKubeVersion(std::string_view text);
// Two or more components; anything after them is ignored.
std::optional<KubeVersion> ParseGenericKubeVersion(std::string_view text);
// Semantic when it can be, else generic (the reading components apply to their own version).
std::optional<KubeVersion> ParseKubeVersion(std::string_view text);

// Negative, zero or positive as `a` is below, equal to or above `b`.
int CompareKubeVersions(const KubeVersion& a, const KubeVersion& b);

}  // namespace berth
