#include "sim/bench.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "api/device_taint_rule.h"
#include "api/read_file.h"
#include "config/load.h"
#include "extender/http_extender.h"
#include "framework/in_memory_cluster.h"
#include "scheduler/scheduler.h"
#include "sim/bench_dra.h"

namespace berth::sim {
namespace {

Result<PodGroup::Vary> DecodeVary(const nlohmann::json& j, const std::string& where) {
  PodGroup::Vary v;
  if (!j.is_object()) return Error{fmt::format("{}: must be a mapping", where)};
  for (const auto& [key, value] : j.items()) {
    int* field = key == "cpuMillis"      ? &v.cpu_millis
                 : key == "memoryMi"     ? &v.memory_mi
                 : key == "labels"       ? &v.labels
                 : key == "zones"        ? &v.zones
                 : key == "sharedClaims" ? &v.shared_claims
                                         : nullptr;
    if (field) {
      if (!value.is_number_integer() || value.get<int>() < 0)
        return Error{fmt::format("{}.{}: must be a non-negative integer", where, key)};
      *field = value.get<int>();
    } else if (key == "priorities") {
      if (!value.is_array()) return Error{fmt::format("{}.priorities: must be a list", where)};
      for (const auto& p : value) {
        if (!p.is_number_integer())
          return Error{fmt::format("{}.priorities: must be integers", where)};
        v.priorities.push_back(p.get<int32_t>());
      }
    } else {
      return Error{fmt::format(
          "{}.{}: unknown field (cpuMillis, memoryMi, labels, zones, sharedClaims, priorities)",
          where, key)};
    }
  }
  return v;
}

Result<std::vector<PodGroup>> DecodeGroups(const nlohmann::json& j, const std::string& where) {
  std::vector<PodGroup> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return Error{fmt::format("{}: must be a list", where)};
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = fmt::format("{}[{}]", where, i);
    PodGroup g;
    if (!j[i].contains("count") || !j[i]["count"].is_number_integer())
      return Error{fmt::format("{}.count: required integer", w)};
    g.count = j[i]["count"].get<int>();
    if (!j[i].contains("template")) return Error{fmt::format("{}.template: required", w)};
    auto pod = DecodePod(j[i]["template"], w + ".template");
    if (!pod.ok()) return pod.error();
    g.template_pod = std::move(pod).value();
    g.name_prefix = j[i].value("namePrefix", g.template_pod.metadata.name.empty()
                                                 ? std::string("pod")
                                                 : g.template_pod.metadata.name);
    if (j[i].contains("namespace")) {
      if (!j[i]["namespace"].is_string())
        return Error{fmt::format("{}.namespace: must be a string", w)};
      g.template_pod.metadata.namespace_ = j[i]["namespace"].get<std::string>();
    }
    if (j[i].contains("namespaceSets")) {
      const auto& sets = j[i]["namespaceSets"];
      if (!sets.is_object() || !sets.contains("prefix") || !sets["prefix"].is_string() ||
          !sets.contains("count") || !sets["count"].is_number_integer() ||
          sets["count"].get<int>() < 0)
        return Error{fmt::format(
            "{}.namespaceSets: want {{prefix: <string>, count: <non-negative integer>}}", w)};
      g.namespace_prefix = sets["prefix"].get<std::string>();
      g.namespace_count = sets["count"].get<int>();
    }
    if (j[i].contains("vary")) {
      auto vary = DecodeVary(j[i]["vary"], w + ".vary");
      if (!vary.ok()) return vary.error();
      g.vary = std::move(vary).value();
    }
    if (j[i].contains("bound")) {
      if (!j[i]["bound"].is_boolean()) return Error{fmt::format("{}.bound: must be a boolean", w)};
      g.bound = j[i]["bound"].get<bool>();
    }
    out.push_back(std::move(g));
  }
  return out;
}

Result<std::vector<NamespaceGroup>> DecodeNamespaceGroups(const nlohmann::json& j,
                                                          const std::string& where) {
  std::vector<NamespaceGroup> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return Error{fmt::format("{}: must be a list", where)};
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = fmt::format("{}[{}]", where, i);
    NamespaceGroup g;
    if (!j[i].is_object() || !j[i].contains("prefix") || !j[i]["prefix"].is_string())
      return Error{fmt::format("{}.prefix: required string", w)};
    g.prefix = j[i]["prefix"].get<std::string>();
    if (!j[i].contains("count") || !j[i]["count"].is_number_integer() ||
        j[i]["count"].get<int>() < 0)
      return Error{fmt::format("{}.count: required non-negative integer", w)};
    g.count = j[i]["count"].get<int>();
    if (j[i].contains("labels")) {
      if (!j[i]["labels"].is_object()) return Error{fmt::format("{}.labels: must be a map", w)};
      for (const auto& [k, v] : j[i]["labels"].items()) {
        if (!v.is_string()) return Error{fmt::format("{}.labels.{}: must be a string", w, k)};
        g.labels[k] = v.get<std::string>();
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

Result<Churn> DecodeChurn(const nlohmann::json& j, const std::string& where) {
  Churn c;
  if (!j.is_object()) return Error{fmt::format("{}: must be a map", where)};
  const std::string mode = j.value("mode", "create");
  if (mode == "create") {
    c.mode = Churn::Mode::kCreate;
  } else if (mode == "recreate") {
    c.mode = Churn::Mode::kRecreate;
  } else {
    return Error{fmt::format("{}.mode: \"{}\" is not create or recreate", where, mode)};
  }
  if (!j.contains("intervalMilliseconds") || !j["intervalMilliseconds"].is_number_integer() ||
      j["intervalMilliseconds"].get<int>() <= 0)
    return Error{fmt::format("{}.intervalMilliseconds: required positive integer", where)};
  c.interval_ms = j["intervalMilliseconds"].get<int>();
  if (!j.contains("templates") || !j["templates"].is_array() || j["templates"].empty())
    return Error{fmt::format("{}.templates: required non-empty list", where)};
  for (size_t i = 0; i < j["templates"].size(); ++i) {
    const std::string w = fmt::format("{}.templates[{}]", where, i);
    auto obj = DecodeObject(j["templates"][i], w);
    if (!obj.ok()) return obj.error();
    const bool supported = std::holds_alternative<std::shared_ptr<const Pod>>(*obj) ||
                           std::holds_alternative<std::shared_ptr<const Node>>(*obj) ||
                           std::holds_alternative<std::shared_ptr<const Service>>(*obj);
    if (!supported) return Error{fmt::format("{}: churn creates Pods, Nodes and Services only", w)};
    c.templates.push_back(std::move(obj).value());
  }
  return c;
}

// Creates churn objects every interval while the measured pods schedule; in recreate mode the
// previous tick's objects are deleted first, so at most one of each template is alive.
class ChurnDriver {
 public:
  ChurnDriver(const Churn& churn, InMemoryCluster& cluster)
      : churn_(churn), cluster_(cluster), last_(std::chrono::steady_clock::now()) {}

  void MaybeTick() {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(churn_.interval_ms)) return;
    last_ = now;
    if (churn_.mode == Churn::Mode::kRecreate) DeleteAlive();
    for (const auto& t : churn_.templates) Create(t);
    ++ticks_;
  }
  int ticks() const { return ticks_; }

 private:
  void Create(const Object& t) {
    const std::string suffix = fmt::format("churn-{}", ticks_);
    if (const auto* pod = std::get_if<std::shared_ptr<const Pod>>(&t)) {
      auto p = std::make_shared<Pod>(**pod);
      p->metadata.name = fmt::format("{}-{}", p->metadata.name, suffix);
      p->metadata.uid = p->metadata.name;
      if (p->metadata.namespace_.empty()) p->metadata.namespace_ = "default";
      alive_pods_.emplace_back(p->metadata.namespace_, p->metadata.name);
      cluster_.AddPod(std::move(p));
    } else if (const auto* node = std::get_if<std::shared_ptr<const Node>>(&t)) {
      auto n = std::make_shared<Node>(**node);
      n->metadata.name = fmt::format("{}-{}", n->metadata.name, suffix);
      n->metadata.labels["kubernetes.io/hostname"] = n->metadata.name;
      alive_nodes_.push_back(n->metadata.name);
      cluster_.AddNode(std::move(n));
    } else if (const auto* svc = std::get_if<std::shared_ptr<const Service>>(&t)) {
      auto s = std::make_shared<Service>(**svc);
      s->metadata.name = fmt::format("{}-{}", s->metadata.name, suffix);
      if (s->metadata.namespace_.empty()) s->metadata.namespace_ = "default";
      alive_services_.emplace_back(s->metadata.namespace_, s->metadata.name);
      cluster_.AddService(std::move(s));
    }
  }
  void DeleteAlive() {
    for (const auto& [ns, name] : alive_pods_) cluster_.RemovePod(ns, name);
    for (const auto& name : alive_nodes_) cluster_.RemoveNode(name);
    for (const auto& [ns, name] : alive_services_) cluster_.RemoveService(ns, name);
    alive_pods_.clear();
    alive_nodes_.clear();
    alive_services_.clear();
  }

  const Churn& churn_;
  InMemoryCluster& cluster_;
  std::chrono::steady_clock::time_point last_;
  int ticks_ = 0;
  std::vector<std::pair<std::string, std::string>> alive_pods_, alive_services_;
  std::vector<std::string> alive_nodes_;
};

double CpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

int64_t PeakRssMb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

// Calls `fn(namespace, name, set, index)` for every pod the group stamps out, in creation
// order, without building the pods.
template <class Fn>
void ForEachStampedName(const PodGroup& g, Fn&& fn) {
  const int sets = g.namespace_count > 0 ? g.namespace_count : 1;
  const std::string& template_ns = g.template_pod.metadata.namespace_;
  for (int s = 0; s < sets; ++s) {
    const std::string ns = g.namespace_count > 0 ? fmt::format("{}-{}", g.namespace_prefix, s)
                           : template_ns.empty() ? std::string("default")
                                                 : template_ns;
    for (int i = 0; i < g.count; ++i) fn(ns, fmt::format("{}-{}", g.name_prefix, i), s, i);
  }
}

// Calls `fn(pod)` for every pod the group stamps out, in creation order; the pod is the
// caller's to finish (a bound group sets its node) before it is shared.
template <class Fn>
void ForEachStamped(const PodGroup& g, const std::string& uid_suffix, Fn&& fn) {
  ForEachStampedName(g, [&](const std::string& ns, const std::string&, int s, int i) {
    fn(internal::StampPod(g, uid_suffix, ns, s, i));
  });
}

int StampedCount(const PodGroup& g) {
  return g.count * (g.namespace_count > 0 ? g.namespace_count : 1);
}

// Schedules until the queue is empty, skipping backoff waits; records per-attempt latency.
void DrainQueue(Scheduler& sched, FakeClock& clock, std::vector<double>* latencies,
                ChurnDriver* churn = nullptr, internal::SteadyStateDriver* steady = nullptr) {
  using SteadyClock = std::chrono::steady_clock;
  SteadyClock::time_point started;
  IdleRunHooks hooks;
  hooks.max_rounds = 1000;
  hooks.before_cycle = [&] {
    if (churn) churn->MaybeTick();
    started = SteadyClock::now();
  };
  hooks.after_cycle = [&] {
    if (latencies)
      latencies->push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count());
    return steady ? steady->AfterCycle() : true;
  };
  sched.RunUntilIdle(clock, hooks);
}

}  // namespace

Result<std::vector<Workload>> LoadWorkloads(const std::string& path) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) return text.error();
  auto docs = ParseDocuments(*text, path);
  if (!docs.ok()) return docs.error();
  std::vector<Workload> out;
  for (const auto& doc : *docs) {
    if (!doc.contains("workloads") || !doc["workloads"].is_array())
      return Error{fmt::format("{}: workloads: required list", path)};
    const auto& list = doc["workloads"];
    for (size_t i = 0; i < list.size(); ++i) {
      const auto& w = list[i];
      const std::string where = fmt::format("{}: workloads[{}]", path, i);
      Workload wl;
      wl.name = w.value("name", "");
      if (wl.name.empty()) return Error{where + ".name: required"};
      if (!w.contains("nodes") || !w["nodes"].is_number_integer())
        return Error{where + ".nodes: required integer"};
      wl.nodes = w["nodes"].get<int>();
      wl.zones = w.value("zones", 0);
      if (!w.contains("nodeTemplate")) return Error{where + ".nodeTemplate: required"};
      auto node = DecodeNode(w["nodeTemplate"], where + ".nodeTemplate");
      if (!node.ok()) return node.error();
      wl.node_template = std::move(node).value();
      if (w.contains("extraNodes")) {
        if (!w["extraNodes"].is_array()) return Error{where + ".extraNodes: must be a list"};
        for (size_t k = 0; k < w["extraNodes"].size(); ++k) {
          auto extra = DecodeNode(w["extraNodes"][k], fmt::format("{}.extraNodes[{}]", where, k));
          if (!extra.ok()) return extra.error();
          wl.extra_nodes.push_back(std::move(extra).value());
        }
      }
      auto namespaces =
          DecodeNamespaceGroups(w.value("namespaces", nlohmann::json()), where + ".namespaces");
      if (!namespaces.ok()) return namespaces.error();
      wl.namespaces = std::move(namespaces).value();
      if (w.contains("churn")) {
        auto churn = DecodeChurn(w["churn"], where + ".churn");
        if (!churn.ok()) return churn.error();
        wl.churn = std::move(churn).value();
      }
      if (w.contains("percentageOfNodesToScore")) {
        const auto& pct = w["percentageOfNodesToScore"];
        if (!pct.is_number_integer() || pct.get<int>() < 0 || pct.get<int>() > 100)
          return Error{where + ".percentageOfNodesToScore: must be an integer 0..100"};
        wl.percentage_of_nodes_to_score = pct.get<int32_t>();
      }
      if (w.contains("objects")) {
        if (!w["objects"].is_array()) return Error{where + ".objects: must be a list"};
        for (size_t k = 0; k < w["objects"].size(); ++k) {
          auto obj = DecodeObject(w["objects"][k], fmt::format("{}.objects[{}]", where, k));
          if (!obj.ok()) return obj.error();
          wl.objects.push_back(std::move(obj).value());
        }
      }
      if (w.contains("nodeResourceSlice")) {
        auto obj = DecodeObject(w["nodeResourceSlice"], where + ".nodeResourceSlice");
        if (!obj.ok()) return obj.error();
        const auto* slice = std::get_if<std::shared_ptr<const ResourceSlice>>(&*obj);
        if (!slice) return Error{where + ".nodeResourceSlice: must be a ResourceSlice"};
        wl.node_resource_slice = **slice;
      }
      if (w.contains("config")) {
        if (!w["config"].is_object()) return Error{where + ".config: must be a map"};
        wl.config_text = w["config"].dump();
      }
      auto init = DecodeGroups(w.value("initPods", nlohmann::json()), where + ".initPods");
      if (!init.ok()) return init.error();
      wl.init_pods = std::move(init).value();
      auto measure = DecodeGroups(w.value("measurePods", nlohmann::json()), where + ".measurePods");
      if (!measure.ok()) return measure.error();
      wl.measure_pods = std::move(measure).value();
      if (auto dra = internal::DecodeDraFields(w, where, &wl); !dra.ok()) return dra.error();
      out.push_back(std::move(wl));
    }
  }
  return out;
}

void VaryPod(const PodGroup::Vary& vary, int index, Pod* pod) {
  if (!pod->spec.containers.empty()) {
    ResourceRequirements& res = pod->spec.containers.front().resources;
    auto add = [&](const char* name, Quantity delta) {
      for (ResourceList* list : {&res.requests, &res.limits}) {
        auto it = list->find(name);
        if (it != list->end()) it->second += delta;
      }
    };
    if (vary.cpu_millis > 0) add("cpu", Quantity::FromMilli(index % vary.cpu_millis));
    if (vary.memory_mi > 0)
      add("memory",
          Quantity::FromInt(int64_t{index % vary.memory_mi} << 20, Quantity::Format::kBinarySI));
  }
  if (vary.labels > 0)
    pod->metadata.labels["berth.dev/variant"] = fmt::format("v{}", index % vary.labels);
  if (vary.zones > 0) {
    NodeSelectorTerm term;
    term.match_expressions.push_back(
        {"topology.kubernetes.io/zone", "In", {fmt::format("zone-{}", index % vary.zones)}});
    if (!pod->spec.affinity) pod->spec.affinity.emplace();
    auto& node_affinity = pod->spec.affinity->node_affinity;
    if (!node_affinity) node_affinity.emplace();
    if (!node_affinity->required) node_affinity->required.emplace();
    // Terms are ORed: the zone joins each existing term, or is the only one.
    auto& terms = node_affinity->required->terms;
    if (terms.empty()) {
      terms.push_back(std::move(term));
    } else {
      for (auto& t : terms) t.match_expressions.push_back(term.match_expressions.front());
    }
  }
  if (!vary.priorities.empty())
    pod->spec.priority = vary.priorities[index % vary.priorities.size()];
  if (vary.shared_claims > 0) {
    std::vector<PodResourceClaim> claims = PodResourceClaimsOf(*pod);
    for (auto& c : claims)
      if (c.resource_claim_name)
        *c.resource_claim_name += fmt::format("-{}", index / vary.shared_claims);
    SetPodResourceClaims(*pod, claims);
  }
}

namespace {

// The configuration a workload runs with: its own, or the one given, with the workload's
// percentageOfNodesToScore over every profile's.
Result<config::SchedulerConfiguration> WorkloadConfiguration(
    const Workload& w, const config::SchedulerConfiguration& config, const Registry& registry) {
  config::SchedulerConfiguration workload_config = config;
  if (!w.config_text.empty()) {
    auto own = config::LoadConfig(w.config_text, w.name + ".config", registry);
    if (!own.ok()) return own.error();
    workload_config = std::move(own).value();
  }
  if (w.percentage_of_nodes_to_score) {
    workload_config.percentage_of_nodes_to_score = *w.percentage_of_nodes_to_score;
    for (auto& p : workload_config.profiles) p.percentage_of_nodes_to_score.reset();
  }
  return workload_config;
}

// The workload's namespaces, its extra nodes, and its generated nodes (each with its
// ResourceSlice when the workload has one).
void AddNamespacesAndNodes(const Workload& w, InMemoryCluster& cluster) {
  for (const auto& g : w.namespaces) {
    for (int i = 0; i < g.count; ++i) {
      auto ns = std::make_shared<Namespace>();
      ns->metadata.name = fmt::format("{}-{}", g.prefix, i);
      ns->metadata.labels = g.labels;
      ns->metadata.labels["kubernetes.io/metadata.name"] = ns->metadata.name;
      cluster.AddNamespace(std::move(ns));
    }
  }
  for (const auto& extra : w.extra_nodes) {
    auto n = std::make_shared<Node>(extra);
    n->metadata.labels.emplace("kubernetes.io/hostname", n->metadata.name);
    cluster.AddNode(std::move(n));
  }
  for (int i = 0; i < w.nodes; ++i) {
    auto n = std::make_shared<Node>(w.node_template);
    n->metadata.name = fmt::format("node-{}", i);
    n->metadata.labels["kubernetes.io/hostname"] = n->metadata.name;
    if (w.zones > 0)
      n->metadata.labels["topology.kubernetes.io/zone"] = fmt::format("zone-{}", i % w.zones);
    cluster.AddNode(n);
    if (w.node_resource_slice) {
      auto slice = std::make_shared<ResourceSlice>(*w.node_resource_slice);
      slice->metadata.name = fmt::format("{}-{}", slice->metadata.name, n->metadata.name);
      slice->metadata.uid = slice->metadata.name;
      slice->spec.node_name = n->metadata.name;
      slice->spec.pool.name = n->metadata.name;
      slice->spec.pool.resource_slice_count = 1;
      cluster.AddResourceSlice(std::move(slice));
    }
  }
}

// The workload's other objects (PodGroups, PriorityClasses, DeviceClasses, claim templates,
// DeviceTaintRules, the ReplicaSets and Services the default spreading selects by, ...), as
// the in-memory cluster loads any object. Pods and nodes come from the templates.
VoidResult AddObjects(const Workload& w, InMemoryCluster& cluster) {
  for (const auto& obj : w.objects) {
    if (std::holds_alternative<std::shared_ptr<const Pod>>(obj) ||
        std::holds_alternative<std::shared_ptr<const Node>>(obj)) {
      return Error{fmt::format(
          "{}: objects: pods and nodes come from initPods, measurePods and nodeTemplate", w.name)};
    }
    cluster.AddObject(obj);
  }
  return {};
}

}  // namespace

Result<BenchResult> RunWorkload(const Workload& w, const config::SchedulerConfiguration& config,
                                const Registry& registry, SchedulerMetricsSink* metrics,
                                bool reuse_results, bool opportunistic_batching) {
  using SteadyClock = std::chrono::steady_clock;
  InMemoryCluster cluster;
  // Backoff waits are skipped by advancing a fake clock: the numbers measure the scheduler's
  // work, not the seconds a retried pod sits in backoff.
  FakeClock clock(TimePoint{std::chrono::hours(24 * 365 * 50)});
  auto configured = WorkloadConfiguration(w, config, registry);
  if (!configured.ok()) return configured.error();
  config::SchedulerConfiguration workload_config = std::move(configured).value();
  SchedulerOptions so;
  so.config = &workload_config;
  so.registry = &registry;
  so.client = &cluster;
  so.clock = &clock;
  auto extenders = extender::BuildExtenders(config.extenders);
  if (!extenders.ok()) return extenders.error();
  so.extenders = std::move(extenders).value();
  so.inline_binding = true;
  so.record_details = false;
  so.metrics = metrics;
  so.reuse_equivalent_pod_results = reuse_results;
  so.opportunistic_batching = opportunistic_batching;
  auto sched_r = Scheduler::Create(so);
  if (!sched_r.ok()) return sched_r.error();
  Scheduler& sched = **sched_r;
  cluster.SetEventHandler(&sched);

  BenchResult r;
  r.name = w.name;
  r.nodes = w.nodes + static_cast<int>(w.extra_nodes.size());
  const auto load_start = SteadyClock::now();
  AddNamespacesAndNodes(w, cluster);
  if (auto added = AddObjects(w, cluster); !added.ok()) return added.error();
  internal::AddSlices(w, cluster);
  if (auto claims = internal::AddClaims(w, cluster); !claims.ok()) return claims.error();
  int bound_index = 0;
  for (const auto& g : w.init_pods) {
    if (!g.bound) continue;
    if (w.nodes == 0) return Error{fmt::format("{}: bound init pods need generated nodes", w.name)};
    ForEachStamped(g, "-init", [&](std::shared_ptr<Pod> running) {
      running->spec.node_name = fmt::format("node-{}", bound_index++ % w.nodes);
      running->status.phase = "Running";
      cluster.AddPod(std::move(running));
    });
    r.init_pods += StampedCount(g);
  }
  // What the first cycle does before it can place a pod: a snapshot of every node.
  sched.WarmUp();
  r.load_seconds = std::chrono::duration<double>(SteadyClock::now() - load_start).count();

  auto t0 = SteadyClock::now();
  for (const auto& g : w.init_pods) {
    if (g.bound) continue;
    ForEachStamped(g, "-init", [&](Ptr<Pod> p) { cluster.AddPod(std::move(p)); });
    r.init_pods += StampedCount(g);
  }
  DrainQueue(sched, clock, nullptr);
  r.init_seconds = std::chrono::duration<double>(SteadyClock::now() - t0).count();

  std::vector<double> latencies;
  int total = 0;
  for (const auto& g : w.measure_pods) total += StampedCount(g);
  latencies.reserve(static_cast<size_t>(total));
  std::optional<internal::SteadyStateDriver> steady;
  if (w.steady_state) steady.emplace(w, cluster);
  for (const auto& g : w.measure_pods) {
    if (steady) break;
    ForEachStamped(g, "-m", [&](Ptr<Pod> p) { cluster.AddPod(std::move(p)); });
  }
  std::optional<ChurnDriver> churn;
  if (w.churn) churn.emplace(*w.churn, cluster);
  auto start = SteadyClock::now();
  const double cpu_start = CpuSeconds();
  if (steady) steady->Start();
  DrainQueue(sched, clock, &latencies, churn ? &*churn : nullptr, steady ? &*steady : nullptr);
  r.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const double cpu_seconds = CpuSeconds() - cpu_start;
  if (churn) r.churn_ticks = churn->ticks();
  // The names are stamped again rather than kept: a list of 50,000 would be the benchmark's
  // own weight in the peak RSS it reports.
  r.measured_pods = steady ? steady->created() : total;
  for (const auto& g : w.measure_pods) {
    if (steady) break;
    ForEachStampedName(g, [&](const std::string& ns, const std::string& name, int, int) {
      auto p = cluster.GetPod(ns, name);
      if (p && !p->spec.node_name.empty()) ++r.scheduled;
    });
  }
  if (steady) r.scheduled = steady->scheduled();
  r.pods_per_second = r.seconds > 0 ? r.scheduled / r.seconds : 0;
  r.cpu_ms_per_pod = r.scheduled > 0 ? cpu_seconds * 1000 / r.scheduled : 0;
  r.p50_ms = Percentile(latencies, 0.50);
  r.p90_ms = Percentile(latencies, 0.90);
  r.p99_ms = Percentile(latencies, 0.99);
  r.peak_rss_mb = PeakRssMb();
  return r;
}

RepeatedResult Summarize(std::vector<BenchResult> runs) {
  RepeatedResult out;
  out.runs = std::move(runs);
  if (out.runs.empty()) return out;
  auto median_of = [&](auto field) {
    std::vector<double> v;
    for (const auto& r : out.runs) v.push_back(static_cast<double>(r.*field));
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  BenchResult& m = out.median;
  m = out.runs.front();
  m.seconds = median_of(&BenchResult::seconds);
  m.pods_per_second = median_of(&BenchResult::pods_per_second);
  m.p50_ms = median_of(&BenchResult::p50_ms);
  m.p90_ms = median_of(&BenchResult::p90_ms);
  m.p99_ms = median_of(&BenchResult::p99_ms);
  m.init_seconds = median_of(&BenchResult::init_seconds);
  m.load_seconds = median_of(&BenchResult::load_seconds);
  m.cpu_ms_per_pod = median_of(&BenchResult::cpu_ms_per_pod);
  m.scheduled = static_cast<int>(median_of(&BenchResult::scheduled));
  out.min_pods_per_second = out.max_pods_per_second = out.runs.front().pods_per_second;
  for (const auto& r : out.runs) {
    m.peak_rss_mb = std::max(m.peak_rss_mb, r.peak_rss_mb);
    out.min_pods_per_second = std::min(out.min_pods_per_second, r.pods_per_second);
    out.max_pods_per_second = std::max(out.max_pods_per_second, r.pods_per_second);
  }
  return out;
}

nlohmann::json ToJson(const RepeatedResult& r) {
  nlohmann::json j = ToJson(r.median);
  j["repeat"] = r.runs.size();
  j["podsPerSecondMin"] = r.min_pods_per_second;
  j["podsPerSecondMax"] = r.max_pods_per_second;
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs) runs.push_back(run.pods_per_second);
  j["podsPerSecondRuns"] = std::move(runs);
  return j;
}

nlohmann::json ToJson(const BenchResult& r) {
  return {{"name", r.name},
          {"nodes", r.nodes},
          {"initPods", r.init_pods},
          {"measuredPods", r.measured_pods},
          {"scheduled", r.scheduled},
          {"seconds", r.seconds},
          {"podsPerSecond", r.pods_per_second},
          {"latencyMs", {{"p50", r.p50_ms}, {"p90", r.p90_ms}, {"p99", r.p99_ms}}},
          {"initSeconds", r.init_seconds},
          {"loadSeconds", r.load_seconds},
          {"churnTicks", r.churn_ticks},
          {"peakRssMB", r.peak_rss_mb},
          {"cpuMsPerPod", r.cpu_ms_per_pod}};
}

}  // namespace berth::sim
