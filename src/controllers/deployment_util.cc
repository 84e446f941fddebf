#include "controllers/deployment_util.h"

#include <fmt/format.h>

#include <cmath>

namespace berth::controllers {

std::string SafeEncodeString(std::string_view s) {
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out(s.size(), ' ');
  for (size_t i = 0; i < s.size(); ++i) {
    out[i] = kAlphanums[static_cast<unsigned char>(s[i]) % kAlphanums.size()];
  }
  return out;
}

uint32_t Fnv32a(std::string_view data, uint32_t hash) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

namespace {

// Nulls, empty objects and empty lists removed at every depth: the API server keeps what a
// client sent ("resources": {} from kubectl, "creationTimestamp": null), and upstream compares
// typed objects, where those equal a missing field.
void Prune(Json& v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      Prune(*it);
      if (it->is_null() || (it->is_object() && it->empty()) || (it->is_array() && it->empty())) {
        it = v.erase(it);
      } else {
        ++it;
      }
    }
  } else if (v.is_array()) {
    for (Json& e : v) Prune(e);
  }
}

}  // namespace

std::string ComputeHash(const Json& pod_template, std::optional<int64_t> collision_count) {
  // nlohmann's objects keep their keys sorted: dump() is canonical once empty fields are gone.
  Json pruned = pod_template;
  Prune(pruned);
  uint32_t h = Fnv32a(pruned.dump());
  if (collision_count) {
    const uint32_t c = static_cast<uint32_t>(*collision_count);
    const char bytes[4] = {static_cast<char>(c & 0xff), static_cast<char>((c >> 8) & 0xff),
                           static_cast<char>((c >> 16) & 0xff),
                           static_cast<char>((c >> 24) & 0xff)};
    h = Fnv32a(std::string_view(bytes, 4), h);
  }
  return SafeEncodeString(std::to_string(h));
}

namespace {

Json WithoutHash(const Json& t) {
  Json copy = t.is_null() ? Json::object() : t;
  Prune(copy);
  if (copy.contains("metadata") && copy["metadata"].is_object()) {
    Json& meta = copy["metadata"];
    if (meta.contains("labels") && meta["labels"].is_object()) {
      meta["labels"].erase(std::string(kPodTemplateHashLabel));
      if (meta["labels"].empty()) meta.erase("labels");
    }
    if (meta.contains("creationTimestamp") && meta["creationTimestamp"].is_null()) {
      meta.erase("creationTimestamp");
    }
    if (meta.empty()) copy.erase("metadata");
  }
  return copy;
}

}  // namespace

bool EqualIgnoreHash(const Json& a, const Json& b) { return WithoutHash(a) == WithoutHash(b); }

Result<int64_t> ScaledValue(const Json& v, int64_t total, bool round_up) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_null()) return int64_t{0};
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.back() == '%') {
      try {
        const int64_t pct = std::stoll(s.substr(0, s.size() - 1));
        const double scaled = static_cast<double>(pct) * static_cast<double>(total) / 100.0;
        return static_cast<int64_t>(round_up ? std::ceil(scaled) : std::floor(scaled));
      } catch (...) {
      }
    }
  }
  return Error{fmt::format("invalid value for IntOrString: {}", v.dump()), ErrorCode::kInvalid};
}

Result<Fenceposts> ResolveFenceposts(const Json& max_surge, const Json& max_unavailable,
                                     int64_t desired) {
  auto surge = ScaledValue(max_surge, desired, true);
  if (!surge.ok()) return surge.error();
  auto unavailable = ScaledValue(max_unavailable, desired, false);
  if (!unavailable.ok()) return unavailable.error();
  Fenceposts f{*surge, *unavailable};
  if (f.max_surge == 0 && f.max_unavailable == 0) f.max_unavailable = 1;
  return f;
}

int64_t SpecReplicas(const Json& obj) { return IntAt(Member(obj, "spec"), "replicas", 1); }

bool IsRollingUpdate(const Json& d) {
  const std::string type = StringAt(Member(Member(d, "spec"), "strategy"), "type");
  return type.empty() || type == "RollingUpdate";
}

namespace {

Fenceposts FencepostsOf(const Json& d) {
  const Json& ru = Member(Member(Member(d, "spec"), "strategy"), "rollingUpdate");
  const Json& surge = Member(ru, "maxSurge");
  const Json& unavailable = Member(ru, "maxUnavailable");
  // Defaults as the API server's (25% each) for a document that lacks them.
  auto f = ResolveFenceposts(surge.is_null() ? Json("25%") : surge,
                             unavailable.is_null() ? Json("25%") : unavailable, SpecReplicas(d));
  return f.ok() ? *f : Fenceposts{0, 1};
}

}  // namespace

int64_t MaxSurge(const Json& d) { return IsRollingUpdate(d) ? FencepostsOf(d).max_surge : 0; }

int64_t MaxUnavailable(const Json& d) {
  const int64_t replicas = SpecReplicas(d);
  if (!IsRollingUpdate(d) || replicas == 0) return 0;
  return std::min(FencepostsOf(d).max_unavailable, replicas);
}

int64_t SumSpecReplicas(const std::vector<const Json*>& sets) {
  int64_t n = 0;
  for (const Json* s : sets)
    if (s) n += SpecReplicas(*s);
  return n;
}

int64_t SumStatus(const std::vector<const Json*>& sets, std::string_view field) {
  int64_t n = 0;
  for (const Json* s : sets)
    if (s) n += IntAt(Member(*s, "status"), field);
  return n;
}

int64_t NewRSNewReplicas(const Json& d, const std::vector<const Json*>& all_rs,
                         const Json& new_rs) {
  const int64_t replicas = SpecReplicas(d);
  if (!IsRollingUpdate(d)) return replicas;
  const int64_t current = SumSpecReplicas(all_rs);
  const int64_t max_total = replicas + MaxSurge(d);
  const int64_t new_replicas = SpecReplicas(new_rs);
  if (current >= max_total) return new_replicas;
  const int64_t scale_up = std::min(max_total - current, replicas - new_replicas);
  return new_replicas + scale_up;
}

int64_t RevisionOf(const Json& obj) {
  const std::string v =
      StringAt(Member(Member(obj, "metadata"), "annotations"), kRevisionAnnotation);
  if (v.empty()) return 0;
  try {
    return std::stoll(v);
  } catch (...) {
    return 0;
  }
}

}  // namespace berth::controllers
