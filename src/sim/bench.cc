#include "sim/bench.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "api/read_file.h"
#include "extender/http_extender.h"
#include "framework/in_memory_cluster.h"
#include "scheduler/scheduler.h"

namespace berth::sim {
namespace {

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
    out.push_back(std::move(g));
  }
  return out;
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

std::shared_ptr<const Pod> Stamp(const PodGroup& g, int i, const std::string& ns_suffix) {
  auto p = std::make_shared<Pod>(g.template_pod);
  p->metadata.name = fmt::format("{}-{}", g.name_prefix, i);
  p->metadata.uid = fmt::format("{}{}-{}", g.name_prefix, ns_suffix, i);
  if (p->metadata.namespace_.empty()) p->metadata.namespace_ = "default";
  return p;
}

// Schedules until the queue is empty, skipping backoff waits; records per-attempt latency.
void DrainQueue(Scheduler& sched, FakeClock& clock, std::vector<double>* latencies) {
  using SteadyClock = std::chrono::steady_clock;
  for (int round = 0; round < 1000; ++round) {
    for (;;) {
      auto a = SteadyClock::now();
      if (!sched.ScheduleOne(false)) break;
      if (latencies)
        latencies->push_back(
            std::chrono::duration<double, std::milli>(SteadyClock::now() - a).count());
    }
    auto next = sched.queue().NextBackoffExpiry();
    if (!next) return;
    if (*next > clock.Now()) clock.Set(*next);
    sched.queue().FlushBackoffQCompleted();
  }
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
      auto init = DecodeGroups(w.value("initPods", nlohmann::json()), where + ".initPods");
      if (!init.ok()) return init.error();
      wl.init_pods = std::move(init).value();
      auto measure = DecodeGroups(w.value("measurePods", nlohmann::json()), where + ".measurePods");
      if (!measure.ok()) return measure.error();
      wl.measure_pods = std::move(measure).value();
      out.push_back(std::move(wl));
    }
  }
  return out;
}

Result<BenchResult> RunWorkload(const Workload& w, const config::SchedulerConfiguration& config,
                                const Registry& registry) {
  using SteadyClock = std::chrono::steady_clock;
  InMemoryCluster cluster;
  // Backoff waits are skipped by advancing a fake clock: the numbers measure the scheduler's
  // work, not the seconds a retried pod sits in backoff.
  FakeClock clock(TimePoint{std::chrono::hours(24 * 365 * 50)});
  SchedulerOptions so;
  so.config = &config;
  so.registry = &registry;
  so.client = &cluster;
  so.clock = &clock;
  auto extenders = extender::BuildExtenders(config.extenders);
  if (!extenders.ok()) return extenders.error();
  so.extenders = std::move(extenders).value();
  so.inline_binding = true;
  so.record_details = false;
  auto sched_r = Scheduler::Create(so);
  if (!sched_r.ok()) return sched_r.error();
  Scheduler& sched = **sched_r;
  cluster.SetEventHandler(&sched);

  BenchResult r;
  r.name = w.name;
  r.nodes = w.nodes;
  for (int i = 0; i < w.nodes; ++i) {
    auto n = std::make_shared<Node>(w.node_template);
    n->metadata.name = fmt::format("node-{}", i);
    n->metadata.labels["kubernetes.io/hostname"] = n->metadata.name;
    if (w.zones > 0)
      n->metadata.labels["topology.kubernetes.io/zone"] = fmt::format("zone-{}", i % w.zones);
    cluster.AddNode(n);
  }

  auto t0 = SteadyClock::now();
  for (const auto& g : w.init_pods) {
    for (int i = 0; i < g.count; ++i) cluster.AddPod(Stamp(g, i, "-init"));
    r.init_pods += g.count;
  }
  DrainQueue(sched, clock, nullptr);
  r.init_seconds = std::chrono::duration<double>(SteadyClock::now() - t0).count();

  std::vector<double> latencies;
  int total = 0;
  for (const auto& g : w.measure_pods) total += g.count;
  latencies.reserve(static_cast<size_t>(total));
  for (const auto& g : w.measure_pods)
    for (int i = 0; i < g.count; ++i) cluster.AddPod(Stamp(g, i, "-m"));
  r.measured_pods = total;
  const int bound_before = cluster.write_counts().binds;
  auto start = SteadyClock::now();
  DrainQueue(sched, clock, &latencies);
  r.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  r.scheduled = cluster.write_counts().binds - bound_before;
  r.pods_per_second = r.seconds > 0 ? r.scheduled / r.seconds : 0;
  r.p50_ms = Percentile(latencies, 0.50);
  r.p90_ms = Percentile(latencies, 0.90);
  r.p99_ms = Percentile(latencies, 0.99);
  r.peak_rss_mb = PeakRssMb();
  return r;
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
          {"peakRssMB", r.peak_rss_mb}};
}

}  // namespace berth::sim
