// The DeploymentController's scaling and rollout strategies (upstream's sync.go, rolling.go,
// recreate.go).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "controllers/deployment.h"
#include "controllers/deployment_util.h"

namespace berth::controllers {

namespace {

bool Active(const Json* s) { return s && SpecReplicas(*s) > 0; }

bool CreatedBefore(const Json* a, const Json* b) {
  const UnixTime ta = CreatedAt(*a), tb = CreatedAt(*b);
  return ta != tb ? ta < tb : NameOf(*a) < NameOf(*b);
}

std::optional<int64_t> IntAnnotation(const Json& set, std::string_view name) {
  const std::string v = StringAt(Member(Member(set, "metadata"), "annotations"), name);
  if (v.empty()) return std::nullopt;
  try {
    return std::stoll(v);
  } catch (...) {
    return std::nullopt;
  }
}

// How many of `to_add` replicas `set` takes, in proportion to its size against the
// Deployment's size when it was last scaled (max-replicas), as upstream's GetProportion.
int64_t Proportion(const Json& set, const Json& d, int64_t to_add, int64_t added) {
  if (SpecReplicas(set) == 0 || to_add == 0 || to_add == added) return 0;
  int64_t fraction;
  if (SpecReplicas(d) == 0) {
    fraction = -SpecReplicas(set);
  } else {
    const int64_t max_replicas = SpecReplicas(d) + MaxSurge(d);
    int64_t annotated =
        IntAnnotation(set, kMaxReplicasAnnotation).value_or(IntAt(Member(d, "status"), "replicas"));
    if (annotated == 0) annotated = 1;
    const double size =
        static_cast<double>(SpecReplicas(set) * max_replicas) / static_cast<double>(annotated);
    fraction = static_cast<int64_t>(std::llround(size)) - SpecReplicas(set);
  }
  const int64_t allowed = to_add - added;
  return to_add > 0 ? std::min(fraction, allowed) : std::max(fraction, allowed);
}

}  // namespace

bool DeploymentController::IsScalingEvent(Rollout& r) const {
  // Classify on the sets as they are, without creating the new one.
  const int64_t replicas = SpecReplicas(r.d);
  for (const Json& s : r.sets) {
    if (SpecReplicas(s) == 0) continue;
    auto desired = IntAnnotation(s, kDesiredReplicasAnnotation);
    if (desired && *desired != replicas) return true;
  }
  return false;
}

VoidResult DeploymentController::Scale(Rollout& r) {
  std::vector<Json*> active;
  for (Json* s : r.All())
    if (Active(s)) active.push_back(s);
  Json* target = nullptr;
  if (active.size() == 1) {
    target = active[0];
  } else if (active.empty()) {
    if (r.new_rs) {
      target = r.new_rs;
    } else if (!r.old_sets.empty()) {
      std::vector<Json*> old = r.old_sets;
      std::sort(old.begin(), old.end(),
                [](const Json* a, const Json* b) { return CreatedBefore(b, a); });
      target = old[0];
    }
  }
  if (target) {
    auto s = ScaleSet(*target, SpecReplicas(r.d), r.d);
    return s.ok() ? VoidResult{} : VoidResult{s.error()};
  }
  const int64_t replicas = SpecReplicas(r.d);
  // Saturated: the new set runs them all; the old ones go.
  if (r.new_rs && SpecReplicas(*r.new_rs) == replicas &&
      IntAnnotation(*r.new_rs, kDesiredReplicasAnnotation) == replicas &&
      IntAt(Member(*r.new_rs, "status"), "availableReplicas") == replicas) {
    for (Json* s : r.old_sets) {
      if (!Active(s)) continue;
      if (auto sc = ScaleSet(*s, 0, r.d); !sc.ok()) return sc.error();
    }
    return {};
  }
  if (!IsRollingUpdate(r.d)) return {};
  int64_t current = 0;
  for (const Json* s : active) current += SpecReplicas(*s);
  const int64_t allowed = replicas > 0 ? replicas + MaxSurge(r.d) : 0;
  const int64_t to_add = allowed - current;
  // Larger sets first; on ties newer first when growing, older first when shrinking.
  std::sort(active.begin(), active.end(), [to_add](const Json* a, const Json* b) {
    if (SpecReplicas(*a) != SpecReplicas(*b)) return SpecReplicas(*a) > SpecReplicas(*b);
    return to_add > 0 ? CreatedBefore(b, a) : CreatedBefore(a, b);
  });
  std::vector<int64_t> sizes;
  int64_t added = 0;
  for (const Json* s : active) {
    int64_t p = to_add != 0 ? Proportion(*s, r.d, to_add, added) : 0;
    sizes.push_back(SpecReplicas(*s) + p);
    added += p;
  }
  for (size_t i = 0; i < active.size(); ++i) {
    // The leftover of the rounding goes to the largest set.
    if (i == 0 && to_add != 0) sizes[0] = std::max<int64_t>(0, sizes[0] + to_add - added);
    if (auto sc = ScaleSet(*active[i], sizes[i], r.d); !sc.ok()) return sc.error();
  }
  return {};
}

VoidResult DeploymentController::RolloutRolling(Rollout& r) {
  if (auto n = NewAndOld(r, true); !n.ok()) return n;
  // The new set grows within replicas + maxSurge.
  const int64_t replicas = SpecReplicas(r.d);
  bool scaled_up = false;
  if (SpecReplicas(*r.new_rs) != replicas) {
    const int64_t target = SpecReplicas(*r.new_rs) > replicas
                               ? replicas
                               : NewRSNewReplicas(r.d, r.AllConst(), *r.new_rs);
    auto s = ScaleSet(*r.new_rs, target, r.d);
    if (!s.ok()) return s.error();
    scaled_up = *s;
  }
  if (scaled_up) return SyncRolloutStatus(r);
  auto scaled_down = ReconcileOldSets(r);
  if (!scaled_down.ok()) return scaled_down.error();
  if (*scaled_down) return SyncRolloutStatus(r);
  if (DeploymentComplete(r.d, CalculateStatus(r))) {
    if (auto c = CleanupOldSets(r); !c.ok()) return c;
  }
  return SyncRolloutStatus(r);
}

Result<bool> DeploymentController::ReconcileOldSets(Rollout& r) {
  std::vector<const Json*> old_const(r.old_sets.begin(), r.old_sets.end());
  if (SumSpecReplicas(old_const) == 0) return false;
  const int64_t all_pods = SumSpecReplicas(r.AllConst());
  const int64_t min_available = SpecReplicas(r.d) - MaxUnavailable(r.d);
  const int64_t new_unavailable =
      SpecReplicas(*r.new_rs) - IntAt(Member(*r.new_rs, "status"), "availableReplicas");
  int64_t max_scaled_down = all_pods - min_available - new_unavailable;
  if (max_scaled_down <= 0) return false;
  std::vector<Json*> old = r.old_sets;
  std::sort(old.begin(), old.end(), CreatedBefore);
  // First the unhealthy replicas of old sets: removing them costs no availability.
  int64_t cleaned = 0;
  for (Json* s : old) {
    if (cleaned >= max_scaled_down) break;
    const int64_t spec = SpecReplicas(*s);
    const int64_t unhealthy = spec - IntAt(Member(*s, "status"), "availableReplicas");
    if (spec == 0 || unhealthy <= 0) continue;
    const int64_t n = std::min(max_scaled_down - cleaned, unhealthy);
    if (auto sc = ScaleSet(*s, spec - n, r.d); !sc.ok()) return sc.error();
    cleaned += n;
  }
  max_scaled_down -= cleaned;
  // Then available ones, keeping minAvailable.
  int64_t scaled = 0;
  const int64_t available = SumStatus(r.AllConst(), "availableReplicas");
  if (available > min_available) {
    const int64_t total = available - min_available;
    for (Json* s : old) {
      if (scaled >= total) break;
      const int64_t spec = SpecReplicas(*s);
      if (spec == 0) continue;
      const int64_t n = std::min(spec, total - scaled);
      if (auto sc = ScaleSet(*s, spec - n, r.d); !sc.ok()) return sc.error();
      scaled += n;
    }
  }
  if (options_.log && cleaned + scaled > 0) {
    options_.log(fmt::format("Deployment {}: scaled down old replica sets by {}", KeyOf(r.d),
                             cleaned + scaled));
  }
  return cleaned + scaled > 0;
}

VoidResult DeploymentController::RolloutRecreate(Rollout& r, const std::vector<const Json*>& pods) {
  if (auto n = NewAndOld(r, false); !n.ok()) return n;
  bool scaled_down = false;
  for (Json* s : r.old_sets) {
    if (SpecReplicas(*s) == 0) continue;
    auto sc = ScaleSet(*s, 0, r.d);
    if (!sc.ok()) return sc.error();
    scaled_down = scaled_down || *sc;
  }
  if (scaled_down) return SyncRolloutStatus(r);
  // Wait until no pod of an old set runs.
  std::vector<std::string> old_uids;
  for (const Json* s : r.old_sets) {
    if (IntAt(Member(*s, "status"), "replicas") > 0) return SyncRolloutStatus(r);
    old_uids.push_back(UidOf(*s));
  }
  for (const Json* p : pods) {
    const Json* ref = ControllerRefOf(*p);
    if (!ref ||
        std::find(old_uids.begin(), old_uids.end(), StringAt(*ref, "uid")) == old_uids.end())
      continue;
    const std::string phase = StringAt(Member(*p, "status"), "phase");
    if (phase != "Failed" && phase != "Succeeded") return SyncRolloutStatus(r);
  }
  if (!r.new_rs) {
    if (auto n = NewAndOld(r, true); !n.ok()) return n;
  }
  if (auto sc = ScaleSet(*r.new_rs, SpecReplicas(r.d), r.d); !sc.ok()) return sc.error();
  if (DeploymentComplete(r.d, CalculateStatus(r))) {
    if (auto c = CleanupOldSets(r); !c.ok()) return c;
  }
  return SyncRolloutStatus(r);
}

VoidResult DeploymentController::CleanupOldSets(Rollout& r) {
  const Json& limit = Member(Member(r.d, "spec"), "revisionHistoryLimit");
  if (!limit.is_number_integer()) return {};
  std::vector<Json*> cleanable;
  for (Json* s : r.old_sets)
    if (!HasDeletionTimestamp(*s)) cleanable.push_back(s);
  const int64_t diff = static_cast<int64_t>(cleanable.size()) - limit.get<int64_t>();
  if (diff <= 0) return {};
  std::sort(cleanable.begin(), cleanable.end(), [](const Json* a, const Json* b) {
    if (RevisionOf(*a) != RevisionOf(*b)) return RevisionOf(*a) < RevisionOf(*b);
    return CreatedBefore(a, b);
  });
  for (int64_t i = 0; i < diff; ++i) {
    const Json& s = *cleanable[i];
    if (IntAt(Member(s, "status"), "replicas") != 0 || SpecReplicas(s) != 0 ||
        IntAt(Member(s, "metadata"), "generation") >
            IntAt(Member(s, "status"), "observedGeneration")) {
      continue;
    }
    auto del = rest_->Delete(
        fmt::format("/apis/apps/v1/namespaces/{}/replicasets/{}", NamespaceOf(s), NameOf(s)));
    if (!del.ok() && del.error().code != ErrorCode::kNotFound) return del.error();
  }
  return {};
}

}  // namespace berth::controllers
