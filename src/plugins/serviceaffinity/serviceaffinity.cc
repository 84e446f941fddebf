#include "plugins/serviceaffinity/serviceaffinity.h"

#include <map>
#include <nlohmann/json.hpp>

#include "berth/api/selectors.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "config/decode_util.h"

namespace berth {
namespace {

using config::internal::Fields;
using config::internal::Problems;

constexpr std::string_view kAffinityNotMatch = "node(s) didn't match service affinity";

struct AffinityState final : StateData, std::enable_shared_from_this<AffinityState> {
  bool has_services = false;
  std::string first_matching_node;  // node of the first placed pod matching the pod's labels
  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<AffinityState>(shared_from_this());
  }
};
inline constexpr StateKey<AffinityState> kStateKey{"PreFilterServiceAffinity"};

// Services in the pod's namespace whose selector matches it.
std::vector<Ptr<Service>> PodServices(const ClusterListers& client, const Pod& pod) {
  std::vector<Ptr<Service>> out;
  for (const auto& svc : client.ListServices(pod.metadata.namespace_)) {
    if (svc && !svc->selector.empty() &&
        CompiledSelector::FromSet(svc->selector).Matches(pod.metadata.labels))
      out.push_back(svc);
  }
  return out;
}

class ServiceAffinity final : public PreFilterPlugin, public FilterPlugin, public ScorePlugin {
 public:
  ServiceAffinity(Handle& handle, ServiceAffinityArgs args)
      : handle_(handle), args_(std::move(args)) {}
  std::string_view Name() const override { return kServiceAffinityName; }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    auto s = std::make_shared<AffinityState>();
    s->has_services = !PodServices(handle_.listers(), *pod).empty();
    const CompiledSelector same = pod->metadata.labels.empty()
                                      ? CompiledSelector::Everything()
                                      : CompiledSelector::FromSet(pod->metadata.labels);
    for (const NodeInfo* ni : handle_.snapshot().nodes()) {
      for (const auto& p : ni->pods()) {
        if (p->pod->metadata.namespace_ == pod->metadata.namespace_ &&
            same.Matches(p->pod->metadata.labels)) {
          s->first_matching_node = ni->name();
          break;
        }
      }
      if (!s->first_matching_node.empty()) break;
    }
    state.Write(kStateKey, std::move(s));
    return Status::Success();
  }

  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override {
    if (args_.affinity_labels.empty()) return Status::Success();
    const AffinityState* s = state.Read(kStateKey);
    if (!s) return Status::Error("ServiceAffinity: PreFilter state missing");
    // Values from the pod's nodeSelector first, the rest from a placed pod of the Service.
    std::map<std::string, std::string> want;
    for (const auto& l : args_.affinity_labels) {
      auto it = pod->spec.node_selector.find(l);
      if (it != pod->spec.node_selector.end()) want[l] = it->second;
    }
    if (want.size() < args_.affinity_labels.size() && s->has_services &&
        !s->first_matching_node.empty()) {
      if (const NodeInfo* other = handle_.snapshot().Get(s->first_matching_node)) {
        for (const auto& l : args_.affinity_labels) {
          if (want.count(l)) continue;
          auto it = other->node()->metadata.labels.find(l);
          if (it != other->node()->metadata.labels.end()) want[l] = it->second;
        }
      }
    }
    for (const auto& [label, value] : want) {
      auto it = node.node()->metadata.labels.find(label);
      if (it == node.node()->metadata.labels.end() || it->second != value)
        return Status::Unschedulable(std::string(kAffinityNotMatch));
    }
    return Status::Success();
  }

  Status Score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override {
    *score = 0;
    const auto services = PodServices(handle_.listers(), *pod);
    if (services.empty() || node.pods().empty()) return Status::Success();
    const CompiledSelector selector = CompiledSelector::FromSet(services.front()->selector);
    for (const auto& p : node.pods()) {
      const Pod& other = *p->pod;
      if (other.metadata.namespace_ == pod->metadata.namespace_ &&
          !other.metadata.deletion_timestamp && selector.Matches(other.metadata.labels))
        ++*score;
    }
    return Status::Success();
  }

  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState&, const PodInfo&,
                        std::span<NodeScore> scores) const override {
    std::vector<double> result(scores.size(), 0);
    const auto& labels = args_.anti_affinity_labels_preference;
    for (const auto& label : labels) {
      int64_t total = 0;
      std::map<std::string, int64_t> by_value;
      std::vector<const std::string*> value_of(scores.size(), nullptr);
      for (size_t i = 0; i < scores.size(); ++i) {
        total += scores[i].score;
        const auto& node_labels = scores[i].node->node()->metadata.labels;
        auto it = node_labels.find(label);
        if (it == node_labels.end()) continue;
        value_of[i] = &it->second;
        by_value[it->second] += scores[i].score;
      }
      for (size_t i = 0; i < scores.size(); ++i) {
        if (!value_of[i]) continue;
        double f = kMaxNodeScore;
        if (total > 0)
          f = kMaxNodeScore * static_cast<double>(total - by_value[*value_of[i]]) / total;
        result[i] += f / static_cast<double>(labels.size());
      }
    }
    for (size_t i = 0; i < scores.size(); ++i) scores[i].score = static_cast<int64_t>(result[i]);
    return Status::Success();
  }

 private:
  Handle& handle_;
  ServiceAffinityArgs args_;
};

Result<std::shared_ptr<const PluginArgs>> DecodeServiceAffinityArgs(const nlohmann::json* raw,
                                                                    const std::string& path) {
  Problems p;
  Fields f(raw, path, p, {"apiVersion", "kind", "affinityLabels", "antiAffinityLabelsPreference"});
  auto args = std::make_shared<ServiceAffinityArgs>();
  if (auto v = f.StringList("affinityLabels")) args->affinity_labels = std::move(*v);
  if (auto v = f.StringList("antiAffinityLabelsPreference"))
    args->anti_affinity_labels_preference = std::move(*v);
  if (!p.ok()) return p.error();
  return std::shared_ptr<const PluginArgs>(std::move(args));
}

}  // namespace

void ServiceAffinityArgs::Encode(nlohmann::json& out) const {
  out["affinityLabels"] = affinity_labels;
  out["antiAffinityLabelsPreference"] = anti_affinity_labels_preference;
}

PluginRegistration ServiceAffinityRegistration() {
  static const ServiceAffinityArgs kDefaults;
  auto factory = [](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "ServiceAffinityArgs");
    if (!typed.ok()) return typed.error();
    return std::unique_ptr<Plugin>(std::make_unique<ServiceAffinity>(handle, **typed));
  };
  return MakeRegistration(kServiceAffinityName, factory, DecodeServiceAffinityArgs);
}

}  // namespace berth
