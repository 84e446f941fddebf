#include "explain/verify.h"

#include <algorithm>

namespace berth::explain {

Cluster Cluster::WithPod(PodPtr replacement) const {
  Cluster c = *this;
  c.pod = std::move(replacement);
  return c;
}

Cluster Cluster::WithNode(NodePtr replacement) const {
  Cluster c = *this;
  for (auto& n : c.nodes)
    if (n->metadata.name == replacement->metadata.name) n = replacement;
  return c;
}

Cluster Cluster::WithAddedNode(NodePtr added) const {
  Cluster c = *this;
  c.nodes.push_back(std::move(added));
  return c;
}

Cluster Cluster::WithoutPods(const std::set<std::string>& keys) const {
  Cluster c = *this;
  std::erase_if(c.others, [&](const Object& o) {
    auto* p = std::get_if<PodPtr>(&o);
    return p && keys.count((*p)->Key());
  });
  return c;
}

Cluster Cluster::WithReplacedPod(PodPtr replacement) const {
  Cluster c = *this;
  for (Object& o : c.others)
    if (auto* p = std::get_if<PodPtr>(&o); p && (*p)->Key() == replacement->Key())
      o = Object(replacement);
  return c;
}

Cluster Cluster::WithAdded(Object o) const {
  Cluster c = *this;
  c.others.push_back(std::move(o));
  return c;
}

std::vector<PodPtr> Cluster::BoundPods() const {
  std::vector<PodPtr> out;
  for (const Object& o : others)
    if (auto* p = std::get_if<PodPtr>(&o)) out.push_back(*p);
  return out;
}

std::vector<PodPtr> Cluster::PodsOn(const std::string& node) const {
  std::vector<PodPtr> out;
  for (const Object& o : others)
    if (auto* p = std::get_if<PodPtr>(&o); p && (*p)->spec.node_name == node) out.push_back(*p);
  return out;
}

std::optional<sim::PodResult> Attempt(const config::SchedulerConfiguration& config,
                                      const Registry& registry, const Cluster& c,
                                      const ExplainOptions& options) {
  std::vector<Object> objects = c.others;
  for (const auto& n : c.nodes) objects.push_back(Object(n));
  objects.push_back(Object(c.pod));
  sim::SimulationOptions so;
  so.seed = options.seed;
  so.max_attempts = 1;
  so.config_source = options.config_source;
  auto r = sim::Simulate(config, registry, objects, so);
  if (!r.ok()) return std::nullopt;
  for (auto& pr : r->results)
    if (pr.pod == c.pod->Key()) return pr;
  return std::nullopt;
}

namespace {

config::SchedulerConfiguration FilteringEveryNode(config::SchedulerConfiguration config) {
  config.percentage_of_nodes_to_score = 100;
  for (auto& profile : config.profiles) profile.percentage_of_nodes_to_score = 100;
  return config;
}

}  // namespace

Verifier::Verifier(const config::SchedulerConfiguration& config, const Registry& registry,
                   const ExplainOptions& options)
    : all_nodes_(FilteringEveryNode(config)), registry_(registry), options_(options) {}

int Verifier::Opens(const Cluster& changed) const {
  auto r = Attempt(all_nodes_, registry_, changed, options_);
  if (!r || r->result != "Scheduled" || !r->last) return 0;
  return std::max(1, r->last->feasible_nodes);
}

bool Verifier::Check(Suggestion s, const Cluster& changed) {
  ++checks_;
  const int opens = Opens(changed);
  if (opens <= 0) return false;
  s.opens_nodes = opens;
  kept_.push_back(std::move(s));
  return true;
}

}  // namespace berth::explain
