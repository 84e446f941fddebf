// The changes Filter plugins propose themselves (FilterRemedies, include/berth/framework/
// remedy.h): for each plugin that rejected nodes, an instance built as the pod's profile
// configures it is asked, per rejected node, what would make that node pass; each answer is
// checked by the Verifier like any other suggestion. Tolerations (TaintToleration) and
// uncordoning (NodeUnschedulable) come from here.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <set>

#include "berth/framework/diagnosis.h"
#include "berth/framework/remedy.h"
#include "explain/suggest.h"
#include "framework/in_memory_cluster.h"
#include "runtime/framework.h"

namespace berth::explain {
namespace {

class SerialParallelizer final : public Parallelizer {
 public:
  void Until(int n, const std::function<void(int)>& fn) override {
    for (int i = 0; i < n; ++i) fn(i);
  }
  int parallelism() const override { return 1; }
};

const config::Profile* ProfileOf(const config::SchedulerConfiguration& config, const Pod& pod) {
  const std::string& name =
      pod.spec.scheduler_name.empty() ? std::string("default-scheduler") : pod.spec.scheduler_name;
  for (const auto& profile : config.profiles)
    if (profile.scheduler_name == name) return &profile;
  return nullptr;
}

// The plugins that rejected nodes, by name, and the nodes each rejected (sorted).
std::map<std::string, std::vector<std::string>> RejectionsByPlugin(const Search& s) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [node, st] : s.a.filter_statuses)
    if (!st.plugin().empty() && s.by_name.count(node)) out[st.plugin()].push_back(node);
  for (auto& [plugin, nodes] : out) std::sort(nodes.begin(), nodes.end());
  return out;
}

// Asks one plugin about its rejected nodes. The same change proposed for several nodes (a
// toleration for the same taints) is checked once.
void AskPlugin(Search& s, const FilterRemedies& plugin, const std::vector<std::string>& nodes) {
  std::set<std::string> asked;
  for (const std::string& node : nodes) {
    std::vector<FilterRemedy> remedies;
    try {
      remedies = plugin.Remedies(*s.c.pod, *s.by_name.at(node), s.a.filter_statuses.at(node));
    } catch (const std::exception&) {
      return;  // a plugin library's failure costs its own suggestions, not the explanation
    }
    for (FilterRemedy& r : remedies) {
      if ((!r.pod && !r.node) || (r.node && r.node->metadata.name != node)) continue;
      if (!asked.insert(r.description).second || !s.TryMore(r.kind)) continue;
      Cluster changed = s.c;
      if (r.pod) changed = changed.WithPod(r.pod);
      if (r.node) changed = changed.WithNode(r.node);
      s.verifier.Check(MakeSuggestion(std::move(r.kind), std::move(r.description),
                                      std::move(r.pod_change), r.node ? node : "", r.cost),
                       changed);
    }
  }
}

// The DRA objects plugins read through their listers.
void AddDraObjects(InMemoryCluster& cluster, const std::vector<Object>& objects) {
  for (const Object& obj : objects) {
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, std::shared_ptr<const DeviceClass>>) {
            cluster.AddDeviceClass(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const ResourceSlice>>) {
            cluster.AddResourceSlice(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const ResourceClaim>>) {
            cluster.AddResourceClaim(o);
          }
        },
        obj);
  }
}

void Diagnose(const Search& s, const std::string& plugin_name, const FilterDiagnosis& plugin,
              const std::vector<std::string>& nodes, std::vector<NodeDiagnosis>* out) {
  for (const std::string& node : nodes) {
    std::vector<std::string> lines;
    try {
      lines = plugin.Diagnose(*s.c.pod, *s.by_name.at(node), s.a.filter_statuses.at(node));
    } catch (const std::exception&) {
      return;  // a plugin library's failure costs its own diagnosis, not the explanation
    }
    if (!lines.empty()) out->push_back({node, plugin_name, std::move(lines)});
  }
}

}  // namespace

void SuggestPluginRemedies(Search& s, const config::SchedulerConfiguration& config,
                           const Registry& registry, std::vector<NodeDiagnosis>* diagnoses) {
  const config::Profile* profile = ProfileOf(config, *s.c.pod);
  if (!profile) return;
  const auto rejections = RejectionsByPlugin(s);
  if (rejections.empty()) return;
  // Plugins are built with a handle over the cluster, as the scheduler builds them; a plugin
  // that cannot be built here is not asked.
  InMemoryCluster cluster;
  for (const NodePtr& n : s.c.nodes) cluster.AddNode(n);
  for (const PodPtr& p : s.c.BoundPods()) cluster.AddPod(p);
  AddDraObjects(cluster, s.c.others);
  RealClock clock;
  SerialParallelizer parallelizer;
  FrameworkServices services;
  services.client = &cluster;
  services.clock = &clock;
  services.parallelizer = &parallelizer;
  services.seed = s.options.seed;
  auto fw = Framework::Create(*profile, registry, services);
  if (!fw.ok()) return;
  for (const auto& [name, nodes] : rejections) {
    const PluginRegistration* reg = registry.Find(name);
    if (!reg || !reg->factory) continue;
    auto plugin = reg->factory(profile->ArgsFor(name), **fw);
    if (!plugin.ok()) continue;
    if (auto* remedies = dynamic_cast<const FilterRemedies*>(plugin->get()))
      AskPlugin(s, *remedies, nodes);
    if (auto* diagnosis = dynamic_cast<const FilterDiagnosis*>(plugin->get());
        diagnosis && diagnoses)
      Diagnose(s, name, *diagnosis, nodes, diagnoses);
  }
}

}  // namespace berth::explain
