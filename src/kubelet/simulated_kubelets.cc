#include "kubelet/simulated_kubelets.h"

#include <fmt/format.h>

#include <algorithm>

#include "client/kubeconfig.h"
#include "client/micro_time.h"
#include "kubelet/documents.h"
#include "kubelet/kubelets_impl.h"

namespace berth::kubelet {

using Impl = SimulatedKubelets::Impl;

Impl::Impl(client::RestClient* rest_client, const Clock* clk, SimulatedKubeletOptions opts)
    : rest(rest_client), clock(clk), options(std::move(opts)), random(options.seed) {
  if (auto cluster = ParseIpv4Net(options.cluster_cidr); cluster.ok()) {
    cidrs.emplace(*cluster, options.node_cidr_prefix);
  } else {
    Log(cluster.error().message + ": nodes get no pod CIDR");
  }
}

void Impl::Log(const std::string& message) const {
  if (options.log) options.log("simulated kubelets: " + message);
}

int64_t Impl::NowSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(clock->Now().time_since_epoch()).count();
}

std::string Impl::NowMicro() const {
  return client::FormatMicroTime(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(clock->Now()));
}

void Impl::Push(Event::Kind kind, const Object& object) {
  {
    std::lock_guard lock(mu);
    events.push_back({kind, object});
  }
  cv.notify_all();
}

uint64_t Impl::Schedule(TimePoint at, TaskKind kind, const std::string& key) {
  const uint64_t token = ++next_seq;
  (kind == TaskKind::kLease ? lease_due : due).push({at, token, kind, key, token});
  return token;
}

void Impl::Queue(std::string method, std::string path, std::string body, std::string content_type,
                 std::function<void(const VoidResult&)> done) {
  writes.push_back({std::move(method), std::move(path), std::move(body), std::move(content_type),
                    std::move(done)});
}

// Writes of one method and content type go in pipelined batches on one connection; the
// answers are handled in order once the batch is back.
size_t Impl::Flush() {
  std::vector<Write> batch = std::move(writes);
  writes.clear();
  std::stable_sort(batch.begin(), batch.end(), [](const Write& a, const Write& b) {
    return std::tie(a.method, a.content_type) < std::tie(b.method, b.content_type);
  });
  size_t failures = 0;
  std::string first_failure;
  for (size_t begin = 0; begin < batch.size();) {
    size_t end = begin + 1;
    while (end < batch.size() && end - begin < options.max_batch &&
           batch[end].method == batch[begin].method &&
           batch[end].content_type == batch[begin].content_type) {
      ++end;
    }
    std::vector<client::RestClient::EncodedWrite> encoded;
    encoded.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) encoded.push_back({batch[i].path, batch[i].body});
    auto results =
        rest->SendEncodedPipelined(batch[begin].method, encoded, batch[begin].content_type);
    for (size_t i = begin; i < end; ++i) {
      const VoidResult& r = results[i - begin];
      if (!r.ok() && r.error().code != ErrorCode::kNotFound &&
          r.error().code != ErrorCode::kAlreadyExists) {
        if (failures++ == 0) first_failure = r.error().message;
      }
      if (batch[i].done) batch[i].done(r);
    }
    begin = end;
  }
  if (failures > 0) {
    Log(fmt::format("{} of {} writes failed (tried again), first: {}", failures, batch.size(),
                    first_failure));
    std::lock_guard lock(stats_mu);
    counters.failed_writes += failures;
  }
  return batch.size();
}

size_t Impl::RunOnce() {
  // Read before the events are taken: once it is true, they hold every listed slice.
  const bool slices_listed = slice_informer && slice_informer->HasSynced();
  std::vector<Event> taken;
  {
    std::lock_guard lock(mu);
    taken.swap(events);
  }
  for (const Event& e : taken) {
    if (e.kind == Event::kSlice || e.kind == Event::kSliceGone || e.kind == Event::kClaim ||
        e.kind == Event::kClaimGone) {
      const auto raw = std::visit([](const auto& p) { return p ? p->raw : RawObject(); }, e.object);
      if (!raw) continue;
      if (e.kind == Event::kSlice || e.kind == Event::kSliceGone) {
        OnSlice(*raw, e.kind == Event::kSliceGone);
      } else {
        OnClaim(*raw, e.kind == Event::kClaimGone);
      }
    } else if (auto* node = std::get_if<std::shared_ptr<const Node>>(&e.object)) {
      if (e.kind == Event::kNodeGone) {
        OnNodeGone((*node)->metadata.name);
      } else {
        OnNode(*node);
      }
    } else if (auto* pod = std::get_if<std::shared_ptr<const Pod>>(&e.object)) {
      if (e.kind == Event::kPodGone) {
        OnPodGone(*pod);
      } else {
        OnPod(*pod);
      }
    }
  }
  if (slices_listed) SlicesSynced();
  size_t sent = 0;
  // A write's answer may make more work due at once (a lease created is renewed later, a
  // failed write is retried later): a few rounds, then the next call.
  // Every round takes the Lease renewals due first, then at most a few batches' worth of other
  // writes: a backlog of pod work (thousands of pods bound at once on a loaded server) waits for
  // later rounds instead of holding the next renewals back until all of it is answered, which
  // could leave nodes without a heartbeat past the node monitor's grace period.
  const size_t round_writes = std::max<size_t>(1, 4 * options.max_batch);
  for (int round = 0; round < 4; ++round) {
    const TimePoint horizon = clock->Now() + options.batch_window;
    while (!lease_due.empty() && lease_due.top().due <= horizon) {
      Task task = lease_due.top();
      lease_due.pop();
      Execute(task);
    }
    while (!due.empty() && due.top().due <= horizon && writes.size() < round_writes) {
      Task task = due.top();
      due.pop();
      Execute(task);
    }
    if (writes.empty()) break;
    sent += Flush();
  }
  std::lock_guard lock(stats_mu);
  counters.nodes = nodes.size();
  counters.pods = pods.size();
  counters.terminating = terminating;
  counters.stopped_nodes = stopped_nodes;
  return sent;
}

void Impl::Execute(const Task& task) {
  switch (task.kind) {
    case TaskKind::kSlices: {
      NodeState* node = FindNode(task.key);
      if (node && node->slices_token == task.token) SyncSlices(*node);
      return;
    }
    case TaskKind::kLease:
    case TaskKind::kNodeStatus:
    case TaskKind::kPodCidr: {
      NodeState* node = FindNode(task.key);
      if (!node || node->stopped) return;
      if (task.kind == TaskKind::kLease && node->lease_token == task.token) RenewLease(*node);
      if (task.kind == TaskKind::kNodeStatus && node->status_token == task.token) {
        PostNodeStatus(*node);
      }
      if (task.kind == TaskKind::kPodCidr && node->cidr_token == task.token) PostPodCidr(*node);
      return;
    }
    case TaskKind::kStartPod:
    case TaskKind::kFinishPod:
    case TaskKind::kDeletePod: {
      auto it = pods.find(task.key);
      if (it == pods.end() || it->second.token != task.token) return;
      if (NodeState* node = FindNode(it->second.pod->spec.node_name); node && node->stopped) {
        // A stopped node's pods wait: the same step is tried again later.
        it->second.token = Schedule(clock->Now() + options.retry_delay, task.kind, task.key);
        return;
      }
      if (task.kind == TaskKind::kStartPod) StartPod(task.key, it->second);
      if (task.kind == TaskKind::kFinishPod) FinishPod(task.key, it->second);
      if (task.kind == TaskKind::kDeletePod) DeletePod(task.key, it->second);
      return;
    }
  }
}

std::optional<TimePoint> Impl::NextDue() const {
  std::optional<TimePoint> next;
  if (!due.empty()) next = due.top().due;
  if (!lease_due.empty() && (!next || lease_due.top().due < *next)) next = lease_due.top().due;
  return next;
}

Impl::NodeState* Impl::FindNode(const std::string& name) {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : &it->second;
}

void Impl::RunThread() {
  for (;;) {
    RunOnce();
    std::unique_lock lock(mu);
    if (stopping) return;
    if (!events.empty()) continue;
    Duration wait = std::chrono::seconds(1);
    if (auto next = NextDue()) wait = std::clamp<Duration>(*next - clock->Now(), Duration{0}, wait);
    cv.wait_for(lock, wait, [&] { return stopping || !events.empty(); });
    if (stopping) return;
  }
}

SimulatedKubelets::SimulatedKubelets(client::RestClient* rest, const Clock* clock,
                                     SimulatedKubeletOptions options)
    : impl_(std::make_unique<Impl>(rest, clock, std::move(options))) {}

Result<std::unique_ptr<SimulatedKubelets>> SimulatedKubelets::ForKubeconfig(
    const std::string& kubeconfig, SimulatedKubeletOptions options) {
  client::KubeconfigSelection selection;
  selection.explicit_path = kubeconfig;
  auto connection = client::ResolveConnection(selection);
  if (!connection.ok()) return connection.error();
  connection->user_agent = "berth-kubelet";
  auto http = net::HttpClient::Create(*connection);
  if (!http.ok()) return http.error();
  auto rest =
      std::make_unique<client::RestClient>(std::move(http).value(), client::RestOptions{.qps = 0});
  rest->set_local(options.local_list_watch);
  auto clock = std::make_unique<RealClock>();
  auto kubelets = std::make_unique<SimulatedKubelets>(rest.get(), clock.get(), std::move(options));
  kubelets->impl_->owned_rest = std::move(rest);
  kubelets->impl_->owned_clock = std::move(clock);
  return kubelets;
}

SimulatedKubelets::~SimulatedKubelets() { Stop(); }

VoidResult SimulatedKubelets::Start() {
  Impl& d = *impl_;
  auto log = [&d](const std::string& m) { d.Log(m); };
  client::InformerOptions nodes{.path = "/api/v1/nodes", .kind = "Node", .log = log};
  nodes.keep_document = KubeletNodeDocument;
  d.node_informer = std::make_unique<client::Informer>(
      d.rest, nodes,
      client::InformerHandlers{
          [&d](const Object& o) { d.Push(Impl::Event::kNode, o); },
          [&d](const Object&, const Object& o) { d.Push(Impl::Event::kNode, o); },
          [&d](const Object& o) { d.Push(Impl::Event::kNodeGone, o); }});
  client::InformerOptions pods{.path = "/api/v1/pods", .kind = "Pod", .log = log};
  pods.keep_document = KubeletPodDocument;
  d.pod_informer = std::make_unique<client::Informer>(
      d.rest, pods,
      client::InformerHandlers{
          [&d](const Object& o) { d.Push(Impl::Event::kPod, o); },
          [&d](const Object&, const Object& o) { d.Push(Impl::Event::kPod, o); },
          [&d](const Object& o) { d.Push(Impl::Event::kPodGone, o); }});
  // resource.k8s.io/v1 may not be served (a cluster without DRA): optional, read as empty.
  auto handlers = [&d](Impl::Event::Kind changed, Impl::Event::Kind gone) {
    return client::InformerHandlers{
        [&d, changed](const Object& o) { d.Push(changed, o); },
        [&d, changed](const Object&, const Object& o) { d.Push(changed, o); },
        [&d, gone](const Object& o) { d.Push(gone, o); }};
  };
  client::InformerOptions slices{.path = "/apis/resource.k8s.io/v1/resourceslices",
                                 .kind = "ResourceSlice",
                                 .log = log,
                                 .optional = true};
  d.slice_informer = std::make_unique<client::Informer>(
      d.rest, slices, handlers(Impl::Event::kSlice, Impl::Event::kSliceGone));
  client::InformerOptions claims{.path = "/apis/resource.k8s.io/v1/resourceclaims",
                                 .kind = "ResourceClaim",
                                 .log = log,
                                 .optional = true};
  d.claim_informer = std::make_unique<client::Informer>(
      d.rest, claims, handlers(Impl::Event::kClaim, Impl::Event::kClaimGone));
  d.node_informer->Start();
  d.pod_informer->Start();
  d.slice_informer->Start();
  d.claim_informer->Start();
  if (d.options.run_thread) d.thread = std::thread([&d] { d.RunThread(); });
  return {};
}

void SimulatedKubelets::Stop() {
  Impl& d = *impl_;
  {
    std::lock_guard lock(d.mu);
    d.stopping = true;
  }
  d.cv.notify_all();
  if (d.thread.joinable()) d.thread.join();
  if (d.claim_informer) d.claim_informer->Stop();
  if (d.slice_informer) d.slice_informer->Stop();
  if (d.pod_informer) d.pod_informer->Stop();
  if (d.node_informer) d.node_informer->Stop();
}

bool SimulatedKubelets::HasSynced() const {
  return impl_->node_informer && impl_->pod_informer && impl_->node_informer->HasSynced() &&
         impl_->pod_informer->HasSynced() && impl_->slice_informer->HasSynced() &&
         impl_->claim_informer->HasSynced();
}

size_t SimulatedKubelets::RunOnce() { return impl_->RunOnce(); }

bool SimulatedKubelets::WaitForEvent(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  return impl_->cv.wait_for(lock, timeout, [&] { return !impl_->events.empty(); });
}

bool SimulatedKubelets::HasPendingEvents() const {
  std::lock_guard lock(impl_->mu);
  return !impl_->events.empty();
}

std::optional<TimePoint> SimulatedKubelets::NextDue() const { return impl_->NextDue(); }

SimulatedKubelets::Stats SimulatedKubelets::stats() const {
  std::lock_guard lock(impl_->stats_mu);
  return impl_->counters;
}

}  // namespace berth::kubelet
