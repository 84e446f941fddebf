// LeaderElector: leader election on a coordination.k8s.io/v1 Lease, with client-go's rules —
// a candidate takes the lease when it is free or its holder has not renewed it within
// leaseDuration (measured on the candidate's own clock from when it last saw the record
// change), the leader renews every retryPeriod and gives up when it could not renew for
// renewDeadline, and a leader that stops releases the lease so a follower takes over at once.
//
// Threads: one elector thread; the callbacks run on it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "client/rest_client.h"

namespace berth::client {

struct LeaderElectionOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "kube-scheduler";
  std::string identity;  // default: hostname + "_" + random
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;  // leadership lost (not called on Stop)
  std::function<void(const std::string&)> log;
};

class LeaderElector {
 public:
  LeaderElector(RestClient* rest, LeaderElectionOptions options);
  ~LeaderElector();
  void Start();
  // Stops; a leader releases the lease (holderIdentity "" and leaseDurationSeconds 1).
  void Stop();
  bool IsLeader() const { return leading_; }
  const std::string& identity() const { return options_.identity; }

 private:
  void Run();
  // One acquire-or-renew attempt; true when we hold the lease afterwards.
  bool TryAcquireOrRenew();
  void Release();

  RestClient* rest_;
  LeaderElectionOptions options_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  // What we last saw of the lease, and when it changed (our clock).
  std::string observed_holder_, observed_renew_;
  std::chrono::steady_clock::time_point observed_time_{};
  std::string lease_rv_;
};

}  // namespace berth::client
