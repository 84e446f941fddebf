// `berth explain`: one read-only attempt, then the finders' candidate changes (suggest_*.cc),
// each verified by the Verifier (verify.cc), ranked and de-duplicated here; rendering is in
// render.cc.
#include "explain/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "explain/suggest.h"
#include "explain/verify.h"

namespace berth::explain {
namespace {

// The cluster for the attempt: the pod, the nodes, and the rest without the other pending
// pods (they do not take part).
Cluster Split(const std::vector<Object>& objects, const std::string& pod_key) {
  Cluster c;
  for (const Object& o : objects) {
    if (auto* p = std::get_if<PodPtr>(&o)) {
      if ((*p)->Key() == pod_key) {
        c.pod = *p;
        continue;
      }
      if ((*p)->spec.node_name.empty()) continue;
    } else if (auto* n = std::get_if<NodePtr>(&o)) {
      c.nodes.push_back(*n);
      continue;
    }
    c.others.push_back(o);
  }
  return c;
}

// Ranked by how many nodes each opens, then by how little it changes, then a change to the pod
// before one to a node (the pod is the asker's own; a node may be cordoned or tainted for
// others' reasons). The same node change verified on several nodes is one suggestion ("label
// node a ..."), saying how many others it works on, so the list shows different kinds of
// change.
std::vector<Suggestion> RankAndMerge(std::vector<Suggestion> found, size_t max) {
  std::stable_sort(found.begin(), found.end(), [](const Suggestion& x, const Suggestion& y) {
    if (x.opens_nodes != y.opens_nodes) return x.opens_nodes > y.opens_nodes;
    if (x.cost != y.cost) return x.cost < y.cost;
    return !x.yaml.empty() && y.yaml.empty();
  });
  std::vector<Suggestion> distinct;
  std::map<std::string, size_t> first_of_kind;
  std::map<std::string, int> more_of_kind;
  for (auto& sug : found) {
    bool per_node = sug.kind == "label" || sug.kind == "uncordon" || sug.kind == "volume-zone" ||
                    sug.kind == "pod-affinity";
    std::string group = sug.change.empty() ? sug.kind : sug.kind + "/" + sug.change;
    if (sug.kind == "resources" && sug.victims.empty()) {
      // The same amount to free on alike nodes, with no pods to name, is one change.
      std::string what = sug.description;
      if (auto at = what.find(" on node " + sug.node); at != std::string::npos)
        what.erase(at, 9 + sug.node.size());
      per_node = true;
      group += "/" + what;
    }
    if (per_node && first_of_kind.count(group)) {
      ++more_of_kind[group];
      continue;
    }
    first_of_kind[group] = distinct.size();
    distinct.push_back(std::move(sug));
  }
  for (const auto& [group, more] : more_of_kind)
    distinct[first_of_kind[group]].description +=
        group.starts_with("pod-affinity")
            ? fmt::format("; {} other change(s) like it checked work too", more)
            : fmt::format("; the same change on {} other node(s) checked works too", more);
  if (distinct.size() > max) distinct.resize(max);
  return distinct;
}

}  // namespace

Result<Explanation> Explain(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::vector<Object>& objects, const std::string& pod_key,
                            const ExplainOptions& options) {
  const Cluster c = Split(objects, pod_key);
  if (!c.pod) return Error{fmt::format("pod {} not found", pod_key), ErrorCode::kNotFound};

  Explanation e;
  e.pod = pod_key;
  e.configuration = options.config_source;
  if (!c.pod->spec.node_name.empty()) {
    e.result = "Bound";
    e.node = c.pod->spec.node_name;
    e.message = fmt::format("already bound to {}", e.node);
    return e;
  }
  auto first = Attempt(config, registry, c, options);
  if (!first) return Error{fmt::format("{}: the scheduling attempt could not run", pod_key)};
  e.result = first->result;
  e.node = first->node;
  e.message = first->message;
  e.attempt = first->last;
  if (e.result == "Scheduled" || !e.attempt) return e;

  e.notes = NodeSizeNotes(c);
  for (auto& note : VolumeClaimNotes(c)) e.notes.push_back(std::move(note));
  Verifier verifier(config, registry, options);
  Search search(c, *e.attempt, options, verifier);
  SuggestPluginRemedies(search, config, registry, &e.diagnoses);
  SuggestNodeChanges(search);
  SuggestResources(search);
  SuggestAntiAffinity(search);
  SuggestPodAffinity(search);
  SuggestSpreadSkew(search);
  e.suggestions = RankAndMerge(verifier.Take(), options.max_suggestions);
  return e;
}

}  // namespace berth::explain
