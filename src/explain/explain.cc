// `berth explain`: one read-only attempt, then the changes the rejecting plugins propose
// (suggest_remedies.cc), each verified by the Verifier (verify.cc), ranked and de-duplicated
// here; rendering is in render.cc.
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
// others' reasons). Changes the plugin marked alike (one merge key: the same node change on
// several nodes, or several changes of one sort) are one suggestion, saying how many others
// were checked, so the list shows different kinds of change.
std::vector<Suggestion> RankAndMerge(std::vector<Suggestion> found, size_t max) {
  std::stable_sort(found.begin(), found.end(), [](const Suggestion& x, const Suggestion& y) {
    if (x.opens_nodes != y.opens_nodes) return x.opens_nodes > y.opens_nodes;
    if (x.cost != y.cost) return x.cost < y.cost;
    return !x.yaml.empty() && y.yaml.empty();
  });
  std::vector<Suggestion> distinct;
  std::map<std::string, size_t> first_of_key;
  std::map<std::string, int> more_of_key;
  for (auto& sug : found) {
    if (!sug.merge_key.empty() &&
        !first_of_key.try_emplace(sug.merge_key, distinct.size()).second) {
      ++more_of_key[sug.merge_key];
      continue;
    }
    distinct.push_back(std::move(sug));
  }
  for (const auto& [key, more] : more_of_key) {
    Suggestion& first = distinct[first_of_key[key]];
    first.description +=
        first.same_change
            ? fmt::format("; the same change on {} other node(s) checked works too", more)
            : fmt::format("; {} other change(s) like it checked work too", more);
  }
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

  Verifier verifier(config, registry, options);
  Search search(c, *e.attempt, options, verifier);
  AskPlugins(search, config, registry, &e.notes, &e.diagnoses);
  e.suggestions = RankAndMerge(verifier.Take(), options.max_suggestions);
  return e;
}

}  // namespace berth::explain
