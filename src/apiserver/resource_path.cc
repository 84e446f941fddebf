#include "apiserver/resource_path.h"

#include <vector>

namespace berth::apiserver {

std::optional<ResourcePath> ParseResourcePath(std::string_view path) {
  std::vector<std::string_view> seg;
  for (size_t i = 1; i <= path.size();) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    seg.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  ResourcePath p;
  size_t rest = 0;
  if (seg.size() >= 3 && seg[0] == "api") {
    p.version = seg[1];
    rest = 2;
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    p.group = seg[1];
    p.version = seg[2];
    rest = 3;
  } else {
    return std::nullopt;
  }
  const std::vector<std::string_view> r(seg.begin() + static_cast<long>(rest), seg.end());
  if (r.size() >= 3 && r[0] == "namespaces" && r[2] != "status" && r[2] != "finalize") {
    p.ns = r[1];
    p.plural = r[2];
    if (r.size() >= 4) p.name = r[3];
    if (r.size() >= 5) p.subresource = r[4];
    p.extra_segments = r.size() > 5;
  } else {
    p.plural = r[0];
    if (r.size() >= 2) p.name = r[1];
    if (r.size() >= 3) p.subresource = r[2];
    p.extra_segments = r.size() > 3;
  }
  return p;
}

}  // namespace berth::apiserver
