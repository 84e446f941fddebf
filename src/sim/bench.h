// `berth bench`: in-process scheduling benchmarks shaped like kube-scheduler's scheduler_perf.
//
// Workloads are data (YAML under bench/): a node template, init pods (scheduled before
// measuring) and measured pods, each a full manifest that is stamped out with generated names.
// The scheduler runs against an InMemoryCluster with inline binding, so the numbers are the
// scheduler's own cost: no API server, no network.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace berth {
class SchedulerMetricsSink;
}

namespace berth::sim {

struct PodGroup {
  int count = 0;
  Pod template_pod;
  std::string name_prefix;
  // With namespace_count > 0, `count` pods go into each of <namespace_prefix>-0..N-1 (a pod
  // set per namespace); otherwise into the template's namespace.
  std::string namespace_prefix;
  int namespace_count = 0;
  // `bound: true`: the pods are already running, spread round-robin over the generated nodes
  // (node-<i % nodes>), as an informer's initial list delivers them; nothing schedules them.
  bool bound = false;
  // `vary`: consecutive pods differ (none of the replicas' result reuse applies). Pod i of the
  // group gets, for each field set (> 0 / non-empty):
  //   cpuMillis: N    its first container's cpu request (and limit, if set) + (i % N) m
  //   memoryMi: N     its first container's memory request (and limit, if set) + (i % N) Mi
  //   labels: N       the label berth.dev/variant=v<i % N>
  //   zones: N        a required node affinity topology.kubernetes.io/zone In [zone-<i % N>]
  //   priorities: [p0, p1, ...]   spec.priority p<i % len>
  //   sharedClaims: N  each spec.resourceClaims[].resourceClaimName gets the suffix -<i / N>:
  //                    N consecutive pods share one claim of a `claims` group
  struct Vary {
    int cpu_millis = 0;
    int memory_mi = 0;
    int labels = 0;
    int zones = 0;
    int shared_claims = 0;
    std::vector<int32_t> priorities;
    bool Any() const {
      return cpu_millis > 0 || memory_mi > 0 || labels > 0 || zones > 0 || shared_claims > 0 ||
             !priorities.empty();
    }
  };
  Vary vary;
};

// Pod `index` of a group as `vary` makes it differ from the template (VaryPod is a no-op when
// the group varies nothing).
void VaryPod(const PodGroup::Vary& vary, int index, Pod* pod);

// Namespaces <prefix>-0..count-1 with the given labels (for namespaceSelector workloads).
struct NamespaceGroup {
  std::string prefix;
  int count = 0;
  Labels labels;
};

// Objects created (and, in recreate mode, deleted again) while the measured pods schedule,
// every `interval_ms` of wall time, as the churn steps of the upstream benchmark suite do.
struct Churn {
  enum class Mode { kCreate, kRecreate };
  Mode mode = Mode::kCreate;
  int interval_ms = 1000;
  std::vector<Object> templates;  // Pods, Nodes and Services
};

struct Workload {
  std::string name;
  int nodes = 0;
  Node node_template;
  int zones = 0;                  // > 0: nodes get topology.kubernetes.io/zone zone-<i % zones>
  std::vector<Node> extra_nodes;  // created as given, before the generated nodes
  std::vector<NamespaceGroup> namespaces;
  std::vector<PodGroup> init_pods;
  std::vector<PodGroup> measure_pods;
  std::optional<Churn> churn;
  // Overrides the configuration's percentageOfNodesToScore (e.g. 100: score every node).
  std::optional<int32_t> percentage_of_nodes_to_score;
  // Objects created after the nodes and before any pod (`objects`: PodGroups, PriorityClasses,
  // DeviceClasses, ResourceClaimTemplates), as a manifest would hold them.
  std::vector<Object> objects;
  // `nodeResourceSlice`: a ResourceSlice stamped once per generated node (as a DRA driver
  // publishes one per node): named <name>-node-<i>, spec.nodeName and spec.pool.name node-<i>.
  std::optional<ResourceSlice> node_resource_slice;
  // `resourceSlices`: ResourceSlices stamped `count` times after the nodes, slice i named
  // <name>-<i> in pool <pool.name>-<i>, as a driver publishes devices that are not a node's own
  // (the template's nodeSelector or allNodes says which nodes reach them). Groups naming the
  // same pool (with its resourceSliceCount) make pools of several slices, e.g. one with the
  // shared counters and one with the devices consuming them. With `indexAttribute: <name>`,
  // every device gets that int attribute set to i.
  struct SliceGroup {
    int count = 0;
    ResourceSlice template_slice;
    std::string index_attribute;
  };
  std::vector<SliceGroup> resource_slices;
  // `claims`: ResourceClaims created after `objects` and before any pod, named <name>-<i> for
  // i in 0..count-1 in the template's namespace. With `allocate: true` each gets an allocation
  // (devices already in use that no pod of the workload holds).
  struct ClaimGroup {
    int count = 0;
    ResourceClaim template_claim;
    bool allocate = false;
  };
  std::vector<ClaimGroup> claims;
  // `steadyState`: the measured groups are kept at `count` pending pods each: a pod that is
  // bound is deleted, with the claims made from its templates, and another is created, until
  // `durationSeconds` of wall time have passed or `pods` pods were scheduled (whichever comes
  // first; at least one is set). The cluster stays as full as it started.
  struct SteadyState {
    double duration_seconds = 0;
    int pods = 0;
  };
  std::optional<SteadyState> steady_state;
  // `config`: a KubeSchedulerConfiguration used instead of the one given to RunWorkload (a
  // workload that needs a plugin outside the default profile, as Coscheduling).
  std::string config_text;
};

// Reads workloads from a YAML file (`workloads: [...]`).
Result<std::vector<Workload>> LoadWorkloads(const std::string& path);

struct BenchResult {
  std::string name;
  int nodes = 0, init_pods = 0, measured_pods = 0;
  int scheduled = 0;  // measured pods bound (churn pods are not counted)
  int churn_ticks = 0;
  double seconds = 0;
  double pods_per_second = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  double init_seconds = 0;
  // Handing the cluster to the scheduler: namespaces, nodes and bound init pods added (each
  // through the event handler into the cache) and the first snapshot taken from the cache.
  double load_seconds = 0;
  int64_t peak_rss_mb = 0;
  // Process CPU time (every thread) while the measured pods scheduled, per scheduled pod: the
  // figure to compare on a machine loaded by other work.
  double cpu_ms_per_pod = 0;
};

// `metrics`: a sink the scheduler reports to (to measure what metrics cost); null: none.
// `reuse_results`: false runs the scheduler without reusing per-node results across equivalent
// pods (`berth bench --no-reuse`), so every pod pays for a full evaluation.
// `opportunistic_batching`: the OpportunisticBatching gate (SchedulerOptions).
Result<BenchResult> RunWorkload(const Workload& w, const config::SchedulerConfiguration& config,
                                const Registry& registry, SchedulerMetricsSink* metrics = nullptr,
                                bool reuse_results = true, bool opportunistic_batching = true);

// N runs of one workload (`--repeat N`): the machines benchmarks run on are noisy, so the
// median and the spread of the runs are reported instead of one sample.
struct RepeatedResult {
  std::vector<BenchResult> runs;
  BenchResult median;  // per field, the median over the runs (peak RSS: the maximum)
  double min_pods_per_second = 0, max_pods_per_second = 0;
};
RepeatedResult Summarize(std::vector<BenchResult> runs);

nlohmann::json ToJson(const BenchResult& r);
nlohmann::json ToJson(const RepeatedResult& r);

}  // namespace berth::sim
