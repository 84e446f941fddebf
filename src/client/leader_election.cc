#include "client/leader_election.h"

#include <fmt/format.h>
#include <unistd.h>

#include <random>

#include "client/micro_time.h"

namespace berth::client {

using Json = nlohmann::json;

namespace {}  // namespace

LeaderElector::LeaderElector(RestClient* rest, LeaderElectionOptions options)
    : rest_(rest), options_(std::move(options)) {
  if (options_.identity.empty()) {
    char host[256] = "berth";
    gethostname(host, sizeof(host) - 1);
    std::mt19937_64 rng{std::random_device{}()};
    options_.identity = fmt::format("{}_{:016x}", host, rng());
  }
}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  if (stop_.exchange(true)) return;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (leading_) Release();
  leading_ = false;
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string path = fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
                                       options_.lease_namespace, options_.lease_name);
  const std::string now = MicroTimeNow();
  const int duration_s = static_cast<int>(options_.lease_duration.count() / 1000);
  auto got = rest_->Get(path);
  if (!got.ok()) {
    if (got.error().code != ErrorCode::kNotFound) {
      if (options_.log) options_.log("error retrieving resource lock: " + got.error().message);
      return false;
    }
    Json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
        {"spec",
         {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", duration_s},
          {"acquireTime", now},
          {"renewTime", now},
          {"leaseTransitions", 0}}}};
    auto created = rest_->Post(
        fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", options_.lease_namespace),
        lease);
    if (!created.ok()) return false;
    observed_holder_ = options_.identity;
    observed_renew_ = now;
    observed_time_ = std::chrono::steady_clock::now();
    return true;
  }
  Json lease = *got;
  const Json spec = lease.value("spec", Json::object());
  std::string holder = spec.value("holderIdentity", "");
  std::string renew = spec.value("renewTime", "");
  if (holder != observed_holder_ || renew != observed_renew_) {
    observed_holder_ = holder;
    observed_renew_ = renew;
    observed_time_ = std::chrono::steady_clock::now();
  }
  auto held_for = std::chrono::seconds(spec.value("leaseDurationSeconds", duration_s));
  const bool mine = holder == options_.identity;
  const bool expired = std::chrono::steady_clock::now() > observed_time_ + held_for;
  if (!holder.empty() && !mine && !expired) return false;
  Json& s = lease["spec"];
  if (!mine) {
    s["acquireTime"] = now;
    s["leaseTransitions"] = spec.value("leaseTransitions", 0) + (holder.empty() ? 0 : 1);
  }
  s["holderIdentity"] = options_.identity;
  s["leaseDurationSeconds"] = duration_s;
  s["renewTime"] = now;
  auto updated = rest_->Put(path, lease);
  if (!updated.ok()) return false;
  observed_holder_ = options_.identity;
  observed_renew_ = now;
  observed_time_ = std::chrono::steady_clock::now();
  return true;
}

void LeaderElector::Release() {
  const std::string path = fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
                                       options_.lease_namespace, options_.lease_name);
  // Best effort: a lease not released expires anyway (a follower then waits out its duration).
  auto got = rest_->Get(path);
  if (!got.ok()) {
    if (options_.log) options_.log("releasing the lease: " + got.error().message);
    return;
  }
  Json lease = *got;
  if (lease["spec"].value("holderIdentity", "") != options_.identity) return;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = MicroTimeNow();
  if (auto put = rest_->Put(path, lease); !put.ok() && options_.log)
    options_.log("releasing the lease: " + put.error().message);
}

void LeaderElector::Run() {
  auto last_renew = std::chrono::steady_clock::now();
  while (!stop_) {
    bool ok = TryAcquireOrRenew();
    auto now = std::chrono::steady_clock::now();
    if (ok) {
      last_renew = now;
      if (!leading_.exchange(true)) {
        if (options_.log)
          options_.log("successfully acquired lease " + options_.lease_namespace + "/" +
                       options_.lease_name);
        if (options_.on_started_leading) options_.on_started_leading();
      }
    } else if (leading_ && now - last_renew > options_.renew_deadline) {
      leading_ = false;
      if (options_.log)
        options_.log("failed to renew lease " + options_.lease_namespace + "/" +
                     options_.lease_name + ": leadership lost");
      if (options_.on_stopped_leading) options_.on_stopped_leading();
      return;
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, options_.retry_period, [&] { return stop_.load(); });
  }
}

}  // namespace berth::client
