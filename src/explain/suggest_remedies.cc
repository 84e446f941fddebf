// The changes Filter plugins propose themselves (include/berth/framework/remedy.h): the pod's
// profile is built over a copy of the cluster being explained, each of its Filter plugins that
// implements FilterRemedySearch is asked once about the nodes it rejected (one that implements
// the older FilterRemedies, node by node), and each change is checked by the Verifier. Explain
// knows no plugin's rules: tolerations, uncordoning, node labels, volume zones, resources,
// spread skew and inter-pod affinity all come from the plugins.
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

Search::Search(const Cluster& cluster, const SchedulingAttempt& attempt, const ExplainOptions& opts,
               Verifier& v)
    : c(cluster), a(attempt), options(opts), verifier(v) {
  for (const auto& n : c.nodes) by_name[n->metadata.name] = n;
}

bool Search::TryMore(const std::string& group) {
  return tried_[group]++ < options.max_candidates_per_kind;
}

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

// The nodes each plugin rejected, by plugin name, sorted by node name.
std::map<std::string, std::vector<std::string>, std::less<>> RejectionsByPlugin(const Search& s) {
  std::map<std::string, std::vector<std::string>, std::less<>> out;
  for (const auto& [node, st] : s.a.filter_statuses)
    if (!st.plugin().empty() && s.by_name.count(node)) out[st.plugin()].push_back(node);
  for (auto& [plugin, nodes] : out) std::sort(nodes.begin(), nodes.end());
  return out;
}

Cluster Apply(const Cluster& c, const ClusterRemedy& r) {
  Cluster changed = c;
  if (r.pod) changed = changed.WithPod(r.pod);
  for (const NodePtr& n : r.nodes)
    changed = std::any_of(c.nodes.begin(), c.nodes.end(),
                          [&](const NodePtr& x) { return x->metadata.name == n->metadata.name; })
                  ? changed.WithNode(n)
                  : changed.WithAddedNode(n);
  if (!r.removed_pods.empty())
    changed = changed.WithoutPods({r.removed_pods.begin(), r.removed_pods.end()});
  for (const PodPtr& p : r.bound_pods) {
    const bool bound = std::any_of(c.others.begin(), c.others.end(), [&](const Object& o) {
      auto* x = std::get_if<PodPtr>(&o);
      return x && (*x)->Key() == p->Key();
    });
    changed = bound ? changed.WithReplacedPod(p) : changed.WithAdded(Object(p));
  }
  return changed;
}

Suggestion ToSuggestion(ClusterRemedy&& r) {
  Suggestion s;
  s.kind = std::move(r.kind);
  s.change = std::move(r.variant);
  s.description = std::move(r.description);
  s.yaml = std::move(r.pod_change);
  s.node = std::move(r.node);
  s.cost = r.cost;
  s.victims = std::move(r.victims);
  s.domain = std::move(r.domain);
  s.running_pod = std::move(r.running_pod);
  s.new_pod = std::move(r.new_pod);
  s.merge_key = std::move(r.merge_key);
  s.same_change = r.same_change;
  return s;
}

// Checks a plugin's remedies in its order: the first `max_candidates_per_kind` of each kind and
// variant, one per description, and of alternatives only up to the first that passes.
void CheckRemedies(Search& s, std::vector<ClusterRemedy> remedies) {
  std::set<std::string> described, settled;
  for (ClusterRemedy& r : remedies) {
    if (!r.pod && r.nodes.empty() && r.removed_pods.empty() && r.bound_pods.empty()) continue;
    if (!r.alternatives.empty() && settled.count(r.alternatives)) continue;
    const std::string group = r.variant.empty() ? r.kind : r.kind + "/" + r.variant;
    if (!described.insert(group + "\n" + r.description).second || !s.TryMore(group)) continue;
    Cluster changed = Apply(s.c, r);
    std::string alternatives = r.alternatives;
    if (s.verifier.Check(ToSuggestion(std::move(r)), changed) && !alternatives.empty())
      settled.insert(std::move(alternatives));
  }
}

// A plugin of the older interface, node by node: a change to the pod or to the node asked
// about.
void AskNodeByNode(Search& s, const FilterRemedies& plugin, const std::vector<std::string>& nodes) {
  std::vector<ClusterRemedy> remedies;
  for (const std::string& node : nodes) {
    std::vector<FilterRemedy> answer;
    try {
      answer = plugin.Remedies(*s.c.pod, *s.by_name.at(node), s.a.filter_statuses.at(node));
    } catch (const std::exception&) {
      break;  // a plugin library's failure costs its own suggestions, not the explanation
    }
    for (FilterRemedy& x : answer) {
      if (x.node && x.node->metadata.name != node) continue;
      ClusterRemedy r;
      r.kind = std::move(x.kind);
      r.description = std::move(x.description);
      r.pod = std::move(x.pod);
      if (x.node) {
        r.nodes.push_back(std::move(x.node));
        r.node = node;
      }
      r.pod_change = std::move(x.pod_change);
      r.cost = x.cost;
      remedies.push_back(std::move(r));
    }
  }
  CheckRemedies(s, std::move(remedies));
}

void Ask(Search& s, const FilterRemedySearch& plugin, const std::vector<std::string>& nodes,
         std::vector<std::string>* notes) {
  std::vector<RejectedNode> rejected;
  rejected.reserve(nodes.size());
  for (const std::string& node : nodes)
    rejected.push_back({s.by_name.at(node).get(), &s.a.filter_statuses.at(node)});
  RemedyProposal proposal;
  try {
    proposal = plugin.ProposeRemedies(*s.c.pod, rejected, s.options.max_candidates_per_kind);
  } catch (const std::exception&) {
    return;  // a plugin library's failure costs its own suggestions, not the explanation
  }
  for (std::string& note : proposal.notes) notes->push_back(std::move(note));
  CheckRemedies(s, std::move(proposal.remedies));
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

void AskPlugins(Search& s, const config::SchedulerConfiguration& config, const Registry& registry,
                std::vector<std::string>* notes, std::vector<NodeDiagnosis>* diagnoses) {
  const config::Profile* profile = ProfileOf(config, *s.c.pod);
  if (!profile) return;
  // The profile is built as the scheduler builds it, with a handle over the cluster being
  // explained (the pod itself is not in it: it is pending); a profile that cannot be built here
  // is not asked.
  InMemoryCluster cluster;
  for (const NodePtr& n : s.c.nodes) cluster.AddNode(n);
  for (const Object& o : s.c.others) cluster.AddObject(o);
  RealClock clock;
  SerialParallelizer parallelizer;
  FrameworkServices services;
  services.client = &cluster;
  services.clock = &clock;
  services.parallelizer = &parallelizer;
  services.seed = s.options.seed;
  auto fw = Framework::Create(*profile, registry, services);
  if (!fw.ok()) return;
  const auto rejections = RejectionsByPlugin(s);
  static const std::vector<std::string> kNone;
  for (const FilterPlugin* plugin : (*fw)->filter_plugins()) {
    auto it = rejections.find(plugin->Name());
    const std::vector<std::string>& nodes = it == rejections.end() ? kNone : it->second;
    // A plugin that rejected no node is still asked for its notes (a pod larger than every
    // node is a fact whichever plugin rejected each node first).
    if (auto* search = dynamic_cast<const FilterRemedySearch*>(plugin)) {
      Ask(s, *search, nodes, notes);
    } else if (auto* remedies = dynamic_cast<const FilterRemedies*>(plugin);
               remedies && !nodes.empty()) {
      AskNodeByNode(s, *remedies, nodes);
    }
    if (auto* diagnosis = dynamic_cast<const FilterDiagnosis*>(plugin); diagnosis && diagnoses)
      Diagnose(s, std::string(plugin->Name()), *diagnosis, nodes, diagnoses);
  }
}

}  // namespace berth::explain
