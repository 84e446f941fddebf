#include "plugins/podtopologyspread/selector_spread.h"

#include <map>

#include "berth/api/selectors.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "plugins/podtopologyspread/constraints.h"

namespace berth {
namespace {

constexpr double kZoneWeighting = 2.0 / 3.0;

struct SelectorState final : StateData, std::enable_shared_from_this<SelectorState> {
  bool skip = true;
  CompiledSelector selector;
  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<SelectorState>(shared_from_this());
  }
};
inline constexpr StateKey<SelectorState> kStateKey{"PreScoreSelectorSpread"};

std::string Label(const Node& node, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = node.metadata.labels.find(k);
    if (it != node.metadata.labels.end()) return it->second;
  }
  return "";
}

// Region and zone, as kube-scheduler's zone key; "" for a node without either.
std::string ZoneKey(const Node& node) {
  const std::string region =
      Label(node, {"topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"});
  const std::string zone =
      Label(node, {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"});
  if (region.empty() && zone.empty()) return "";
  return region + ":\x00:" + zone;
}

class SelectorSpread final : public PreScorePlugin, public ScorePlugin {
 public:
  explicit SelectorSpread(Handle& handle) : handle_(handle) {}
  std::string_view Name() const override { return kSelectorSpreadName; }

  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const>) override {
    auto s = std::make_shared<SelectorState>();
    if (pod->spec.topology_spread_constraints.empty()) {
      if (auto selector = podtopologyspread::DefaultSelector(*pod, handle_.listers())) {
        s->selector = CompiledSelector::FromOptional(selector);
        s->skip = false;
      }
    }
    state.Write(kStateKey, std::move(s));
    return Status::Success();
  }

  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override {
    *score = 0;
    const SelectorState* s = state.Read(kStateKey);
    if (!s || s->skip) return Status::Success();
    for (const auto& p : node.pods()) {
      const Pod& other = *p->pod;
      if (other.metadata.namespace_ != pod->metadata.namespace_ ||
          other.metadata.deletion_timestamp)
        continue;
      if (s->selector.Matches(other.metadata.labels)) ++*score;
    }
    return Status::Success();
  }

  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState& state, const PodInfo&,
                        std::span<NodeScore> scores) const override {
    const SelectorState* s = state.Read(kStateKey);
    if (!s || s->skip) return Status::Success();
    std::map<std::string, int64_t> by_zone;
    int64_t most_node = 0;
    for (const NodeScore& n : scores) {
      most_node = std::max(most_node, n.score);
      const std::string zone = ZoneKey(*n.node->node());
      if (!zone.empty()) by_zone[zone] += n.score;
    }
    int64_t most_zone = 0;
    for (const auto& [zone, count] : by_zone) most_zone = std::max(most_zone, count);
    const double max = static_cast<double>(kMaxNodeScore);
    for (NodeScore& n : scores) {
      double f = max;
      if (most_node > 0) f = max * static_cast<double>(most_node - n.score) / most_node;
      if (!by_zone.empty()) {
        const std::string zone = ZoneKey(*n.node->node());
        if (!zone.empty()) {
          double zone_score = max;
          if (most_zone > 0)
            zone_score = max * static_cast<double>(most_zone - by_zone[zone]) / most_zone;
          f = f * (1.0 - kZoneWeighting) + kZoneWeighting * zone_score;
        }
      }
      n.score = static_cast<int64_t>(f);
    }
    return Status::Success();
  }

 private:
  Handle& handle_;
};

}  // namespace

PluginRegistration SelectorSpreadRegistration() {
  return MakeRegistration(kSelectorSpreadName, FactoryOf<SelectorSpread>());
}

}  // namespace berth
