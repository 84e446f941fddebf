// The nodes of SimulatedKubelets: which are simulated, their leases, status and pod CIDRs.
#include <fmt/format.h>

#include "api/declared_features.h"
#include "kubelet/json_fields.h"
#include "kubelet/kubelets_impl.h"

namespace berth::kubelet {

using Impl = SimulatedKubelets::Impl;
using Json = nlohmann::json;

namespace {

constexpr const char* kMergePatch = "application/merge-patch+json";
constexpr const char* kLeases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

// A uniformly random offset in [0, span): spreads the nodes' heartbeats over the interval.
Duration Spread(std::mt19937_64& random, Duration span) {
  if (span.count() <= 0) return Duration{0};
  return Duration(std::uniform_int_distribution<int64_t>(0, span.count() - 1)(random));
}

}  // namespace

bool Impl::Selected(const Node& node) const {
  if (options.all_nodes) return true;
  auto it = node.metadata.annotations.find(options.node_annotation);
  return it != node.metadata.annotations.end() && it->second == "true";
}

void Impl::OnNode(const std::shared_ptr<const Node>& node) {
  const std::string& name = node->metadata.name;
  if (!Selected(*node)) {
    if (nodes.count(name)) OnNodeGone(name);
    return;
  }
  if (auto it = nodes.find(name); it != nodes.end()) {
    if (it->second.uid == node->metadata.uid) {
      UpdateOffered(it->second, *node);
      UpdateStopped(it->second, *node);
      if (UpdateDeclaredFeatures(it->second, *node) && !it->second.stopped)
        NodeStatusChanged(it->second);
      if (it->second.allocatable != node->status.allocatable) {
        it->second.allocatable = node->status.allocatable;
        RetryDeferredResizes(name);
      }
      return;
    }
    OnNodeGone(name);  // deleted and created again meanwhile
  }
  NodeState& st = nodes[name];
  st.name = name;
  st.uid = node->metadata.uid;
  st.allocatable = node->status.allocatable;
  static const Json kEmpty = Json::object();
  const Json& doc = node->raw ? *node->raw : kEmpty;
  const Json& status = Member(doc, "status");
  for (const Json& a : Member(status, "addresses")) {
    if (StringMember(a, "type") == "InternalIP" && st.internal_ip.empty()) {
      st.internal_ip = StringMember(a, "address");
    }
  }
  bool ready = false;
  for (const Json& c : Member(status, "conditions")) {
    if (StringMember(c, "type") == "Ready") {
      ready = StringMember(c, "status") == "True";
      st.ready_since = StringMember(c, "lastTransitionTime");
    }
  }
  const int64_t now_s = NowSeconds();
  if (!ready || st.ready_since.empty()) st.ready_since = FormatTimestamp(now_s);
  if (st.internal_ip.empty()) {
    // 172.18.0.0/16 and up, as a local cluster's container network numbers its nodes.
    st.internal_ip = FormatIpv4((172u << 24 | 18u << 16) + 2 + next_node_ip++);
  }
  // A node created by hand lacks what the kubelet reports when it registers (capacity,
  // addresses, nodeInfo): its first status fills in what is missing, and keeps what is there.
  st.registration = RegistrationStatus(name, st.internal_ip, options.node_defaults);
  for (const char* field : {"capacity", "allocatable", "addresses"}) {
    if (!Member(status, field).empty()) st.registration.erase(field);
  }
  if (!StringMember(Member(status, "nodeInfo"), "kubeletVersion").empty()) {
    st.registration.erase("nodeInfo");
    st.registration.erase("daemonEndpoints");
  }
  UpdateDeclaredFeatures(st, *node);
  st.needs_registration = !ready || !st.registration.empty() || st.features_dirty;
  st.images = ImagesFromStatus(Member(status, "images"));
  const TimePoint now = clock->Now();
  if (auto cidr = ParseIpv4Net(StringMember(Member(doc, "spec"), "podCIDR")); cidr.ok()) {
    st.cidr = *cidr;
    if (cidrs) cidrs->MarkUsed(*cidr);
  } else if (cidrs) {
    st.cidr = cidrs->Allocate();
    if (st.cidr) {
      st.cidr_token = Schedule(now, TaskKind::kPodCidr, name);
    } else {
      Log(fmt::format("no pod CIDR left in {} for node {}", options.cluster_cidr, name));
    }
  }
  if (st.cidr) st.ips.emplace(*st.cidr);
  st.stopped = false;
  UpdateOffered(st, *node);
  if (UpdateStopped(st, *node)) return;  // created stopped: nothing runs until started
  // The lease at once (the kubelet's first act), then renewals spread over the interval.
  st.lease_token = Schedule(now + Spread(random, std::min<Duration>(options.lease_renew_interval,
                                                                    std::chrono::seconds(1))),
                            TaskKind::kLease, name);
  st.status_token = Schedule(
      st.needs_registration ? now : now + Spread(random, options.node_status_report_interval),
      TaskKind::kNodeStatus, name);
  // Pods that were bound before the node was seen (or before a restart) are taken up now.
  if (auto bound = pods_by_node.find(name); bound != pods_by_node.end()) {
    for (const std::string& key : bound->second) {
      if (auto p = pods.find(key); p != pods.end()) Advance(key, p->second, st);
    }
  }
}

bool Impl::UpdateDeclaredFeatures(NodeState& st, const Node& node) {
  st.declared_features =
      DeclaredFeaturesFor(node.metadata.annotations, options.node_defaults.kubelet_version);
  std::vector<std::string> current;
  if (const Json* list = declared_features::NodeDeclaredFeaturesOf(node)) {
    for (const Json& f : *list)
      if (f.is_string()) current.push_back(f.get<std::string>());
  }
  st.features_dirty = current != st.declared_features;
  return st.features_dirty;
}

bool Impl::UpdateStopped(NodeState& st, const Node& node) {
  auto it = node.metadata.annotations.find(kStoppedAnnotation);
  const bool stopped = it != node.metadata.annotations.end() && it->second == "true";
  if (stopped == st.stopped) return false;
  st.stopped = stopped;
  stopped ? ++stopped_nodes : --stopped_nodes;
  if (stopped) {
    // Pending lease and status writes are dropped (Execute skips them); pods' tasks wait.
    Log(fmt::format("node {} stopped", st.name));
    return true;
  }
  Log(fmt::format("node {} started", st.name));
  // A kubelet starting: Ready from now, the lease and the status at once.
  st.ready_since = FormatTimestamp(NowSeconds());
  const TimePoint now = clock->Now();
  st.lease_token = Schedule(now, TaskKind::kLease, st.name);
  st.status_token = Schedule(now, TaskKind::kNodeStatus, st.name);
  if (auto bound = pods_by_node.find(st.name); bound != pods_by_node.end()) {
    for (const std::string& key : bound->second) {
      if (auto p = pods.find(key); p != pods.end()) Advance(key, p->second, st);
    }
  }
  return true;
}

void Impl::OnNodeGone(const std::string& name) {
  auto it = nodes.find(name);
  if (it == nodes.end()) return;
  if (it->second.cidr && cidrs) cidrs->Release(*it->second.cidr);
  // The lease is owned by the node: the garbage collector would delete it with the node.
  if (it->second.lease_created) {
    Queue("DELETE", fmt::format("{}/{}", kLeases, name), "", "application/json", nullptr);
  }
  DeleteSlices(name);
  if (it->second.stopped) --stopped_nodes;
  nodes.erase(it);
}

void Impl::RenewLease(NodeState& node) {
  const std::string name = node.name;
  const uint64_t token = node.lease_token;
  auto next = [this, name, token](Duration after, bool created) {
    NodeState* n = FindNode(name);
    if (!n || n->lease_token != token) return;
    n->lease_created = created;
    n->lease_token = Schedule(clock->Now() + after, TaskKind::kLease, name);
  };
  {
    std::lock_guard lock(stats_mu);
    ++counters.lease_writes;
  }
  if (!node.lease_created) {
    Queue("POST", kLeases,
          NodeLease(name, node.uid, options.lease_duration_seconds, NowMicro()).dump(),
          "application/json", [this, next](const VoidResult& r) {
            if (r.ok()) {
              // The first renewal lands anywhere in the interval: nodes created together
              // renew apart from then on.
              next(Spread(random, options.lease_renew_interval), true);
            } else if (r.error().code == ErrorCode::kAlreadyExists) {
              next(Duration{0}, true);  // left by an earlier run: renewed at once
            } else {
              next(options.retry_delay, false);
            }
          });
    return;
  }
  Queue("PATCH", fmt::format("{}/{}", kLeases, name),
        LeaseRenewPatch(name, options.lease_duration_seconds, NowMicro()), kMergePatch,
        [this, next](const VoidResult& r) {
          if (r.ok()) {
            next(options.lease_renew_interval, true);
          } else {
            const bool gone = r.error().code == ErrorCode::kNotFound;
            next(gone ? Duration{0} : options.retry_delay, !gone);
          }
        });
}

void Impl::NodeStatusChanged(NodeState& node) {
  node.status_token = Schedule(clock->Now(), TaskKind::kNodeStatus, node.name);
}

void Impl::PostNodeStatus(NodeState& node) {
  const std::string now = FormatTimestamp(NowSeconds());
  Json status = {{"conditions", NodeConditions(now, node.ready_since)}};
  if (node.needs_registration) status.update(node.registration);
  if (node.images_dirty || node.needs_registration) status["images"] = NodeImages(node.images);
  if (node.features_dirty) {
    // An empty list is left out, as the kubelet leaves it out (null removes it in a merge patch).
    status["declaredFeatures"] =
        node.declared_features.empty() ? Json(nullptr) : Json(node.declared_features);
  }
  const std::string name = node.name;
  const uint64_t token = node.status_token;
  const bool registered = node.needs_registration, imaged = node.images_dirty;
  {
    std::lock_guard lock(stats_mu);
    ++counters.node_status_writes;
  }
  Queue("PATCH", "/api/v1/nodes/" + name + "/status", Json{{"status", std::move(status)}}.dump(),
        kMergePatch, [this, name, token, registered, imaged](const VoidResult& r) {
          NodeState* n = FindNode(name);
          if (!n || (!r.ok() && r.error().code == ErrorCode::kNotFound)) return;
          if (r.ok()) {
            if (registered) {
              n->needs_registration = false;
              n->registration = Json::object();
            }
            if (imaged && n->status_token == token) n->images_dirty = false;
          }
          if (n->status_token != token) return;  // a change since: its own write is due
          n->status_token = Schedule(
              clock->Now() + (r.ok() ? options.node_status_report_interval : options.retry_delay),
              TaskKind::kNodeStatus, name);
        });
}

void Impl::PostPodCidr(NodeState& node) {
  const std::string name = node.name;
  const uint64_t token = node.cidr_token;
  const std::string cidr = node.cidr->ToString();
  Queue("PATCH", "/api/v1/nodes/" + name,
        Json{{"spec", {{"podCIDR", cidr}, {"podCIDRs", {cidr}}}}}.dump(), kMergePatch,
        [this, name, token](const VoidResult& r) {
          NodeState* n = FindNode(name);
          if (r.ok() || !n || n->cidr_token != token || r.error().code == ErrorCode::kNotFound) {
            return;
          }
          n->cidr_token = Schedule(clock->Now() + options.retry_delay, TaskKind::kPodCidr, name);
        });
}

}  // namespace berth::kubelet
