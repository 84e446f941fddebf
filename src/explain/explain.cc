#include "explain/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "berth/api/resources.h"
#include "sim/simulator.h"

namespace berth::explain {
namespace {

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;

struct Cluster {
  std::vector<Object> others;  // everything but nodes and the pod
  std::vector<NodePtr> nodes;
  PodPtr pod;
};

// One attempt for the pod over the cluster; nullopt when the simulation fails.
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

int FeasibleAfter(const config::SchedulerConfiguration& config, const Registry& registry,
                  const Cluster& c, const ExplainOptions& options) {
  auto r = Attempt(config, registry, c, options);
  if (!r || r->result != "Scheduled" || !r->last) return 0;
  return std::max(1, r->last->feasible_nodes);
}

bool Tolerates(const Pod& pod, const Taint& t) {
  for (const Toleration& tol : pod.spec.tolerations) {
    if (!tol.effect.empty() && tol.effect != t.effect) continue;
    if (tol.op == "Exists" && (tol.key.empty() || tol.key == t.key)) return true;
    if ((tol.op.empty() || tol.op == "Equal") && tol.key == t.key && tol.value == t.value)
      return true;
  }
  return false;
}

std::string FormatAmount(std::string_view resource, int64_t v) {
  if (resource == "cpu") return v % 1000 == 0 ? fmt::format("{}", v / 1000) : fmt::format("{}m", v);
  if (resource == "memory" || resource == "ephemeral-storage") {
    constexpr int64_t kMi = 1024 * 1024;
    return fmt::format("{}Mi", (v + kMi - 1) / kMi);
  }
  return std::to_string(v);
}

}  // namespace

Result<Explanation> Explain(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::vector<Object>& objects, const std::string& pod_key,
                            const ExplainOptions& options) {
  Cluster c;
  for (const Object& o : objects) {
    if (auto* p = std::get_if<PodPtr>(&o)) {
      if ((*p)->Key() == pod_key) {
        c.pod = *p;
        continue;
      }
      if ((*p)->spec.node_name.empty()) continue;  // other pending pods do not take part
    } else if (auto* n = std::get_if<NodePtr>(&o)) {
      c.nodes.push_back(*n);
      continue;
    }
    c.others.push_back(o);
  }
  if (!c.pod) return Error{fmt::format("pod {} not found in the manifests", pod_key)};

  Explanation e;
  e.pod = pod_key;
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

  // Candidate changes from the rejections, each checked by scheduling again.
  const SchedulingAttempt& a = *e.attempt;
  std::vector<Suggestion> found;
  std::map<std::string, NodePtr> by_name;
  for (const auto& n : c.nodes) by_name[n->metadata.name] = n;

  // Tolerations for the taints that kept the pod off nodes.
  std::set<std::tuple<std::string, std::string, std::string>> taints;
  for (const auto& [node, st] : a.filter_statuses) {
    if (st.plugin() != "TaintToleration" || !by_name.count(node)) continue;
    for (const Taint& t : by_name[node]->spec.taints)
      if ((t.effect == "NoSchedule" || t.effect == "NoExecute") && !Tolerates(*c.pod, t))
        taints.insert({t.key, t.value, t.effect});
  }
  for (const auto& [key, value, effect] : taints) {
    Cluster changed = c;
    auto pod = std::make_shared<Pod>(*c.pod);
    pod->spec.tolerations.push_back({key, value.empty() ? "Exists" : "Equal", value, effect, {}});
    changed.pod = pod;
    if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0) {
      Suggestion s{"toleration",
                   fmt::format("add a toleration for the taint {}{}{}:{}", key,
                               value.empty() ? "" : "=", value, effect),
                   value.empty()
                       ? fmt::format("tolerations:\n- key: {}\n  operator: Exists\n  effect: {}\n",
                                     key, effect)
                       : fmt::format("tolerations:\n- key: {}\n  operator: Equal\n  value: {}\n  "
                                     "effect: {}\n",
                                     key, value, effect),
                   "",
                   opens,
                   0};
      found.push_back(std::move(s));
    }
  }

  for (const auto& [node, st] : a.filter_statuses) {
    if (!by_name.count(node)) continue;
    const NodePtr& n = by_name[node];
    auto with_node = [&](NodePtr replacement) {
      Cluster changed = c;
      for (auto& x : changed.nodes)
        if (x->metadata.name == node) x = replacement;
      return FeasibleAfter(config, registry, changed, options);
    };
    if (st.plugin() == "NodeUnschedulable") {
      auto uncordoned = std::make_shared<Node>(*n);
      uncordoned->spec.unschedulable = false;
      if (int opens = with_node(uncordoned); opens > 0)
        found.push_back({"uncordon",
                         fmt::format("uncordon node {} (kubectl uncordon {})", node, node), "",
                         node, opens, 0});
    } else if (st.plugin() == "NodeAffinity" && !c.pod->spec.node_selector.empty()) {
      auto labelled = std::make_shared<Node>(*n);
      std::vector<std::string> added;
      for (const auto& [k, v] : c.pod->spec.node_selector) {
        auto it = labelled->metadata.labels.find(k);
        if (it == labelled->metadata.labels.end() || it->second != v) {
          labelled->metadata.labels[k] = v;
          added.push_back(fmt::format("{}={}", k, v));
        }
      }
      if (added.empty()) continue;
      if (int opens = with_node(labelled); opens > 0)
        found.push_back({"label",
                         fmt::format("label node {} with {} (kubectl label node {} {})", node,
                                     fmt::join(added, ","), node, fmt::join(added, " ")),
                         "", node, opens, static_cast<int64_t>(added.size())});
    } else if (st.plugin() == "NodeResourcesFit") {
      // What the node lacks for this pod: its requests plus the pod's, beyond allocatable.
      const Resource want = ComputePodRequests(*c.pod).requests;
      Resource used;
      for (const Object& o : c.others)
        if (auto* p = std::get_if<PodPtr>(&o); p && (*p)->spec.node_name == node)
          used.Add(ComputePodRequests(**p).requests);
      const Resource alloc = Resource::FromList(n->status.allocatable);
      auto grown = std::make_shared<Node>(*n);
      std::vector<std::string> freeing;
      int64_t cost = 0;
      for (std::string_view r : {"cpu", "memory", "ephemeral-storage"}) {
        const int64_t lack = used.Get(r) + want.Get(r) - alloc.Get(r);
        if (lack <= 0) continue;
        freeing.push_back(fmt::format("{} {}", FormatAmount(r, lack), r));
        cost += r == "cpu" ? lack : lack / (1024 * 1024);
        Quantity q = Quantity::Parse(r == "cpu" ? fmt::format("{}m", alloc.Get(r) + lack)
                                                : std::to_string(alloc.Get(r) + lack))
                         .value();
        grown->status.allocatable[std::string(r)] = q;
      }
      if (freeing.empty()) continue;
      if (int opens = with_node(grown); opens > 0)
        found.push_back({"resources",
                         fmt::format("free {} on node {} (evict or shrink pods there)",
                                     fmt::join(freeing, " and "), node),
                         "", node, opens, cost});
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Suggestion& x, const Suggestion& y) {
    if (x.opens_nodes != y.opens_nodes) return x.opens_nodes > y.opens_nodes;
    return x.cost < y.cost;
  });
  if (found.size() > options.max_suggestions) found.resize(options.max_suggestions);
  e.suggestions = std::move(found);
  return e;
}

nlohmann::json ToJson(const Explanation& e) {
  nlohmann::json j = {{"pod", e.pod}, {"result", e.result}, {"message", e.message}};
  if (!e.node.empty()) j["node"] = e.node;
  if (e.attempt) {
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& [node, st] : e.attempt->filter_statuses)
      nodes[node] = {{"rejectedBy", st.plugin()}, {"reason", st.Message()}};
    const SchedulingAttempt& a = *e.attempt;
    for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
      nlohmann::json scores = nlohmann::json::object();
      for (size_t p = 0; p < a.score_plugins.size() && p < a.scores.plugin_scores.size(); ++p)
        if (p >= a.scores.plugin_ran.size() || a.scores.plugin_ran[p])
          scores[a.score_plugins[p]] = a.scores.plugin_scores[p][i] * a.score_weights[p];
      nodes[a.scored_nodes[i]] = {{"scores", scores}, {"total", a.scores.totals[i]}};
    }
    j["nodes"] = std::move(nodes);
  }
  nlohmann::json s = nlohmann::json::array();
  for (const auto& x : e.suggestions) {
    nlohmann::json o = {
        {"kind", x.kind}, {"description", x.description}, {"opensNodes", x.opens_nodes}};
    if (!x.yaml.empty()) o["podChange"] = x.yaml;
    if (!x.node.empty()) o["node"] = x.node;
    s.push_back(std::move(o));
  }
  j["suggestions"] = std::move(s);
  return j;
}

std::string ToText(const Explanation& e) {
  std::string out = fmt::format("{}: {}{}\n", e.pod, e.result,
                                e.node.empty() ? "" : fmt::format(" -> {}", e.node));
  if (!e.message.empty() && e.result != "Scheduled") out += fmt::format("  {}\n", e.message);
  if (e.attempt) {
    std::map<std::string, std::string> rows;
    for (const auto& [node, st] : e.attempt->filter_statuses)
      rows[node] = fmt::format("rejected by {}: {}", st.plugin(), st.Message());
    const SchedulingAttempt& a = *e.attempt;
    for (size_t i = 0; i < a.scored_nodes.size(); ++i)
      rows[a.scored_nodes[i]] = fmt::format("fits, score {}", a.scores.totals[i]);
    if (!rows.empty()) out += "\n";
    for (const auto& [node, text] : rows)
      out += fmt::format("  {} {:<20} {}\n", node == e.node ? "*" : " ", node, text);
  }
  if (!e.suggestions.empty()) {
    out += "\nSmallest changes that would place it (each checked by scheduling again):\n";
    for (size_t i = 0; i < e.suggestions.size(); ++i) {
      const Suggestion& s = e.suggestions[i];
      out += fmt::format("  {}. {} — fits {} node(s)\n", i + 1, s.description, s.opens_nodes);
      if (!s.yaml.empty()) {
        for (size_t pos = 0; pos < s.yaml.size();) {
          size_t nl = s.yaml.find('\n', pos);
          out += "       " + s.yaml.substr(pos, nl - pos) + "\n";
          pos = nl == std::string::npos ? s.yaml.size() : nl + 1;
        }
      }
    }
  } else if (e.result == "Unschedulable") {
    out +=
        "\nNo single change among tolerations, uncordoning, node labels or freeing resources "
        "places it.\n";
  }
  return out;
}

}  // namespace berth::explain
