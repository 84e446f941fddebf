#include "sim/compare.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include "api/pod_owner.h"
#include "berth/api/resources.h"
#include "sim/capacity.h"

namespace berth::sim {
namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string ZoneLabel(const Node& node) {
  for (const char* key :
       {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
    auto it = node.metadata.labels.find(key);
    if (it != node.metadata.labels.end()) return it->second;
  }
  return "";
}

// The second, detailed run of configuration `c` for the first `max_explained` differences.
VoidResult Explain(const CompareConfig& config, size_t c, const Registry& registry,
                   const std::vector<Object>& objects, const SimulationResult& timed,
                   const CompareOptions& options, std::vector<PodDiff>* diffs) {
  std::unordered_map<std::string, int> attempts;
  for (const PodResult& r : timed.results) attempts[r.pod] = r.attempts;
  DetailCollector collector(diffs, c, attempts, options.max_explained);
  if (!collector.More()) return {};
  SimulationOptions so;
  so.seed = options.seed;
  so.config_source = config.name;
  so.record_details = true;
  so.keep_last_attempts = false;
  so.observer = &collector;
  so.keep_running = [&collector] { return collector.More(); };
  BERTH_TRY_ASSIGN(detailed, Simulate(*config.config, registry, objects, so));
  (void)detailed;
  return {};
}

struct FinalState {
  std::vector<std::pair<std::string, std::string>> node_zones;  // input order
  std::map<std::string, int> per_node;
  std::map<std::string, int> holders;  // pods per node that hold it (HoldsNode)
  std::vector<Object> objects;         // the cluster as the run left it (pending pods dropped)
};

FinalState FinalStateOf(const std::vector<Object>& input, const SimulationResult& run) {
  std::unordered_set<std::string> victims;
  std::unordered_map<std::string, const PodResult*> by_pod;
  for (const PodResult& r : run.results) {
    by_pod[r.pod] = &r;
    victims.insert(r.victims.begin(), r.victims.end());
  }
  FinalState s;
  for (const Object& o : input) {
    if (auto* n = std::get_if<std::shared_ptr<const Node>>(&o)) {
      s.node_zones.emplace_back((*n)->metadata.name, ZoneLabel(**n));
      s.per_node.try_emplace((*n)->metadata.name, 0);
      s.objects.push_back(o);
    } else if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o)) {
      const std::string key = (*p)->Key();
      if (victims.count(key)) continue;
      if (!(*p)->spec.node_name.empty()) {
        ++s.per_node[(*p)->spec.node_name];
        if (HoldsNode(**p)) ++s.holders[(*p)->spec.node_name];
        s.objects.push_back(o);
        continue;
      }
      auto it = by_pod.find(key);
      if (it == by_pod.end() || it->second->result != "Scheduled") continue;
      auto bound = std::make_shared<Pod>(**p);
      bound->spec.node_name = it->second->node;
      ++s.per_node[bound->spec.node_name];
      if (HoldsNode(*bound)) ++s.holders[bound->spec.node_name];
      s.objects.push_back(Object(std::shared_ptr<const Pod>(std::move(bound))));
    } else {
      s.objects.push_back(o);
    }
  }
  return s;
}

}  // namespace

ConfigMetrics OutcomeMetrics(const SimulationResult& run) {
  ConfigMetrics m;
  for (const PodResult& r : run.results) {
    ++m.pods;
    if (r.result == "Scheduled") {
      ++m.scheduled;
    } else {
      ++m.pending;
      m.pending_pods.push_back(r.pod);
    }
    if (!r.victims.empty()) {
      ++m.preemptors;
      m.victims += static_cast<int>(r.victims.size());
    }
  }
  return m;
}

Result<std::optional<Pod>> ResolveShape(const std::vector<Object>& objects,
                                        const CompareOptions& options, std::string* source) {
  if (!options.shape.empty()) {
    *source = "--shape";
    BERTH_TRY_ASSIGN(pod, ShapePod(options.shape));
    return std::optional<Pod>(std::move(pod));
  }
  std::vector<std::shared_ptr<const Pod>> pending, bound;
  for (const Object& o : objects)
    if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o))
      ((*p)->spec.node_name.empty() ? pending : bound).push_back(*p);
  *source = pending.empty() ? "median running pod" : "median pending pod";
  return MedianShape(pending.empty() ? bound : pending);
}

std::string_view StateName(NodeView::State s) {
  switch (s) {
    case NodeView::State::kScored:
      return "scored";
    case NodeView::State::kOnlyFeasible:
      return "only feasible node";
    case NodeView::State::kRejected:
      return "rejected";
    case NodeView::State::kNotEvaluated:
      return "not evaluated";
  }
  return "";
}

DetailCollector::DetailCollector(std::vector<PodDiff>* diffs, size_t config,
                                 const std::unordered_map<std::string, int>& attempts,
                                 int max_explained)
    : diffs_(diffs), config_(config) {
  const size_t n = std::min(diffs->size(), static_cast<size_t>(std::max(0, max_explained)));
  for (size_t i = 0; i < n; ++i) {
    auto it = attempts.find((*diffs)[i].pod);
    if (it != attempts.end() && it->second > 0) wants_[(*diffs)[i].pod] = {i, it->second, false};
  }
}

void DetailCollector::OnAttempt(const SchedulingAttempt& a) {
  auto it = wants_.find(a.pod->Key());
  if (it == wants_.end()) return;
  PodDiff& diff = (*diffs_)[it->second.diff];
  ConfigDecision& d = diff.per_config[config_];
  d.views.clear();
  for (const std::string& node : diff.candidates) d.views.push_back(ViewOf(a, node));
  d.explained = true;
  if (!it->second.done && a.attempt >= it->second.attempts) {
    it->second.done = true;
    ++done_;
  }
}

std::vector<PodDiff> FindDifferences(const std::vector<const SimulationResult*>& runs) {
  std::vector<PodDiff> out;
  if (runs.size() < 2) return out;
  std::vector<std::unordered_map<std::string, const PodResult*>> by_pod(runs.size());
  for (size_t c = 1; c < runs.size(); ++c)
    for (const PodResult& r : runs[c]->results) by_pod[c][r.pod] = &r;
  static const PodResult kMissing = [] {
    PodResult r;
    r.result = "Absent";
    return r;
  }();
  for (const PodResult& first : runs[0]->results) {
    std::vector<const PodResult*> row{&first};
    bool differs = false;
    for (size_t c = 1; c < runs.size(); ++c) {
      auto it = by_pod[c].find(first.pod);
      const PodResult* r = it == by_pod[c].end() ? &kMissing : it->second;
      differs |= r->result != first.result || r->node != first.node;
      row.push_back(r);
    }
    if (!differs) continue;
    PodDiff d;
    d.pod = first.pod;
    for (const PodResult* r : row) {
      if (!r->node.empty() &&
          std::find(d.candidates.begin(), d.candidates.end(), r->node) == d.candidates.end())
        d.candidates.push_back(r->node);
      ConfigDecision cd;
      cd.result = r->result;
      cd.node = r->node;
      cd.victims = r->victims;
      d.per_config.push_back(std::move(cd));
    }
    out.push_back(std::move(d));
  }
  return out;
}

NodeView ViewOf(const SchedulingAttempt& a, const std::string& node) {
  NodeView v;
  v.node = node;
  const ScoreTable& t = a.scores;
  for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
    if (a.scored_nodes[i] != node) continue;
    v.state = NodeView::State::kScored;
    for (size_t p = 0; p < a.score_plugins.size(); ++p) {
      if (!t.HasRow(p)) continue;
      const int64_t weight = p < a.score_weights.size() ? a.score_weights[p] : 1;
      v.weighted.emplace_back(a.score_plugins[p], t.plugin_scores[p][i] * weight);
    }
    for (const auto& [name, scores] : t.extender_scores)
      v.weighted.emplace_back("extender/" + name, scores[i]);
    v.total = i < t.totals.size() ? t.totals[i] : 0;
    return v;
  }
  if (auto it = a.filter_statuses.find(node); it != a.filter_statuses.end()) {
    v.state = NodeView::State::kRejected;
    v.reason = fmt::format("{}: {}", it->second.plugin(), it->second.Message());
    return v;
  }
  if (a.pre_filter_rejection) {
    v.state = NodeView::State::kRejected;
    v.reason = fmt::format("{} (PreFilter): {}", a.pre_filter_rejection->plugin(),
                           a.pre_filter_rejection->Message());
    return v;
  }
  if (a.selected_node == node || a.node == node) v.state = NodeView::State::kOnlyFeasible;
  return v;
}

std::vector<std::pair<std::string, int64_t>> TippedBy(const std::vector<NodeView>& views,
                                                      const std::string& chosen) {
  const NodeView* mine = nullptr;
  const NodeView* runner_up = nullptr;
  for (const NodeView& v : views) {
    if (v.state != NodeView::State::kScored) continue;
    if (v.node == chosen) {
      mine = &v;
    } else if (!runner_up || v.total > runner_up->total) {
      runner_up = &v;
    }
  }
  std::vector<std::pair<std::string, int64_t>> out;
  if (!mine || !runner_up) return out;
  for (const auto& [plugin, points] : mine->weighted) {
    int64_t other = 0;
    for (const auto& [p2, points2] : runner_up->weighted)
      if (p2 == plugin) other = points2;
    if (points > other) out.emplace_back(plugin, points - other);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  return out;
}

Spread SpreadOf(const std::map<std::string, int>& counts) {
  Spread s;
  bool first = true;
  for (const auto& [name, n] : counts) {
    if (first || n > s.max) s.max = n, s.max_at = name;
    if (first || n < s.min) s.min = n, s.min_at = name;
    first = false;
  }
  return s;
}

bool HoldsNode(const Pod& pod) { return !ReturnsToItsNode(pod); }

void FillPlacementMetrics(const std::vector<std::pair<std::string, std::string>>& node_zones,
                          const std::map<std::string, int>& pods_per_node,
                          const std::map<std::string, int>& holders_per_node, ConfigMetrics* m) {
  // Only nodes that exist count: pods left on a node a replay deleted are placed nowhere.
  m->per_node.clear();
  m->per_zone.clear();
  m->nodes = static_cast<int>(node_zones.size());
  m->nodes_used = 0;
  bool zoned = false;
  for (const auto& [node, zone] : node_zones) {
    auto it = pods_per_node.find(node);
    const int n = it == pods_per_node.end() ? 0 : it->second;
    m->per_node[node] = n;
    if (auto h = holders_per_node.find(node); h != holders_per_node.end() && h->second > 0)
      ++m->nodes_used;
    zoned |= !zone.empty();
    m->per_zone[zone] += n;
  }
  if (!zoned) m->per_zone.clear();
  m->node_spread = SpreadOf(m->per_node);
  m->zone_spread = SpreadOf(m->per_zone);
}

Result<Pod> ShapePod(std::string_view shape) {
  Pod pod;
  pod.metadata.name = "shape";
  pod.metadata.namespace_ = "default";
  Container c;
  c.name = "shape";
  size_t start = 0;
  while (start <= shape.size()) {
    size_t end = shape.find(',', start);
    if (end == std::string_view::npos) end = shape.size();
    std::string_view item = shape.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return Error{fmt::format("--shape: \"{}\" is not name=quantity", item)};
    auto q = Quantity::Parse(item.substr(eq + 1));
    if (!q.ok())
      return Error{fmt::format("--shape: {}: {}", item.substr(0, eq), q.error().message)};
    c.resources.requests[std::string(item.substr(0, eq))] = *q;
    start = end + 1;
  }
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

std::optional<Pod> MedianShape(const std::vector<std::shared_ptr<const Pod>>& pods) {
  if (pods.empty()) return std::nullopt;
  std::vector<int64_t> cpu, memory;
  for (const auto& p : pods) {
    const Resource r = ComputePodRequests(*p).requests;
    cpu.push_back(r.milli_cpu);
    memory.push_back(r.memory);
  }
  auto median = [](std::vector<int64_t>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  Pod pod;
  pod.metadata.name = "shape";
  pod.metadata.namespace_ = "default";
  Container c;
  c.name = "shape";
  if (int64_t m = median(cpu); m > 0) c.resources.requests["cpu"] = Quantity::FromMilli(m);
  if (int64_t m = median(memory); m > 0)
    c.resources.requests["memory"] = Quantity::FromInt(m, Quantity::Format::kBinarySI);
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

std::string ShapeText(const Pod& pod) {
  std::string out;
  for (const Container& c : pod.spec.containers)
    for (const auto& [name, q] : c.resources.requests)
      out += fmt::format("{}{}={}", out.empty() ? "" : ",", name, q.String());
  return out.empty() ? "(no requests)" : out;
}

VoidResult FillShapeFit(const CompareConfig& config, const Registry& registry,
                        const std::vector<Object>& objects, const Pod& shape,
                        const CompareOptions& options, ConfigMetrics* m) {
  Pod tmpl = shape;
  if (!config.config->profiles.empty())
    tmpl.spec.scheduler_name = config.config->profiles[0].scheduler_name;
  CapacityOptions co;
  co.max = options.shape_max;
  co.seed = options.seed;
  co.config_source = config.name;
  BERTH_TRY_ASSIGN(fit, EstimateCapacity(*config.config, registry, objects, tmpl, co));
  m->shape_fit = fit.placed;
  m->shape_fit_capped = fit.reached_max;
  return {};
}

Result<CompareResult> Compare(const std::vector<CompareConfig>& configs, const Registry& registry,
                              const std::vector<Object>& objects, const CompareOptions& options) {
  CompareResult out;
  std::vector<SimulationResult> runs;
  for (const CompareConfig& c : configs) {
    SimulationOptions so;
    so.seed = options.seed;
    so.config_source = c.name;
    so.record_details = false;
    so.keep_last_attempts = false;
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = CpuSeconds();
    BERTH_TRY_ASSIGN(run, Simulate(*c.config, registry, objects, so));
    ConfigMetrics m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    m.cpu_seconds = CpuSeconds() - cpu0;
    out.configs.push_back(std::move(m));
    runs.push_back(std::move(run));
  }
  std::vector<const SimulationResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r);
  out.diffs = FindDifferences(ptrs);
  out.differing = static_cast<int>(out.diffs.size());
  out.pods = runs.empty() ? 0 : static_cast<int>(runs[0].results.size());
  for (size_t c = 0; c < configs.size(); ++c) {
    VoidResult explained = Explain(configs[c], c, registry, objects, runs[c], options, &out.diffs);
    if (!explained.ok()) return explained.error();
  }
  for (PodDiff& d : out.diffs)
    for (ConfigDecision& cd : d.per_config)
      if (cd.explained && !cd.node.empty()) cd.tipped_by = TippedBy(cd.views, cd.node);

  std::optional<Pod> shape;
  if (options.compute_shape_fit) {
    BERTH_TRY_ASSIGN(resolved, ResolveShape(objects, options, &out.shape_source));
    shape = std::move(resolved);
    if (shape) out.shape = ShapeText(*shape);
  }
  for (size_t c = 0; c < configs.size(); ++c) {
    FinalState state = FinalStateOf(objects, runs[c]);
    ConfigMetrics m = OutcomeMetrics(runs[c]);
    FillPlacementMetrics(state.node_zones, state.per_node, state.holders, &m);
    m.name = configs[c].name;
    m.seconds = out.configs[c].seconds;
    m.cpu_seconds = out.configs[c].cpu_seconds;
    if (shape) {
      Pod tmpl = *shape;
      if (!configs[c].config->profiles.empty())
        tmpl.spec.scheduler_name = configs[c].config->profiles[0].scheduler_name;
      CapacityOptions co;
      co.max = options.shape_max;
      co.seed = options.seed;
      co.config_source = configs[c].name;
      BERTH_TRY_ASSIGN(fit,
                       EstimateCapacity(*configs[c].config, registry, state.objects, tmpl, co));
      m.shape_fit = fit.placed;
      m.shape_fit_capped = fit.reached_max;
    }
    out.configs[c] = std::move(m);
  }
  return out;
}

}  // namespace berth::sim
