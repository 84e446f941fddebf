#include "framework/pod_signature.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

namespace berth::signature {
namespace {

auto TolerationKey(const Toleration& t) {
  return std::tie(t.key, t.op, t.value, t.effect, t.toleration_seconds);
}

std::set<int32_t> HostPorts(const Pod& pod) {
  std::set<int32_t> ports;
  for (const auto* list : {&pod.spec.containers, &pod.spec.init_containers})
    for (const Container& c : *list)
      for (const ContainerPort& p : c.ports)
        if (p.host_port != 0) ports.insert(p.host_port);
  return ports;
}

bool Modeled(const Volume& v) {
  return v.persistent_volume_claim || v.gce_persistent_disk || v.aws_elastic_block_store || v.rbd ||
         v.iscsi || v.csi || v.ephemeral;
}

// The pod's modeled volumes without their names. A generic ephemeral volume's claim is named
// after the pod and the volume, and differs between pods; its source (the template) does not.
std::vector<Volume> Sources(const Pod& pod) {
  std::vector<Volume> out;
  for (const Volume& v : pod.spec.volumes) {
    if (!Modeled(v)) continue;
    Volume copy = v;
    copy.name.clear();
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

bool SameTolerations(const Pod& a, const Pod& b) {
  const auto& x = a.spec.tolerations;
  const auto& y = b.spec.tolerations;
  if (x.size() != y.size()) return false;
  if (std::equal(x.begin(), x.end(), y.begin())) return true;
  std::vector<const Toleration*> sx, sy;
  for (const Toleration& t : x) sx.push_back(&t);
  for (const Toleration& t : y) sy.push_back(&t);
  auto less = [](const Toleration* l, const Toleration* r) {
    return TolerationKey(*l) < TolerationKey(*r);
  };
  std::sort(sx.begin(), sx.end(), less);
  std::sort(sy.begin(), sy.end(), less);
  return std::equal(sx.begin(), sx.end(), sy.begin(), sy.end(),
                    [](const Toleration* l, const Toleration* r) { return *l == *r; });
}

bool SameHostPorts(const Pod& a, const Pod& b) { return HostPorts(a) == HostPorts(b); }

bool SameVolumeSources(const Pod& a, const Pod& b) {
  std::vector<Volume> x = Sources(a), y = Sources(b);
  if (x.size() != y.size()) return false;
  // Few volumes per pod: a quadratic match keeps Volume free of an ordering.
  std::vector<bool> used(y.size(), false);
  for (const Volume& v : x) {
    bool found = false;
    for (size_t i = 0; i < y.size() && !found; ++i) {
      if (!used[i] && y[i] == v) used[i] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace berth::signature
