// The fixture of the simulated kubelets' tests: the embedded API server over HTTP, as in
// `berth up`, and a fake clock. Every step happens when a test moves the clock and runs the
// kubelets' due work.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "client/api_server_test_util.h"
#include "kubelet/simulated_kubelets.h"

namespace berth::kubelet::testing {

class KubeletTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start(std::string("berth-kubelet-test-") +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    rest_ = api_.rest();
    // The fake clock starts at the wall clock's second: the server stamps deletions with it.
    clock_.Set(TimePoint(std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch())));
  }
  void TearDown() override {
    kubelets_.reset();
    api_.Stop();
  }

  // (Re)starts the kubelets without their thread: RunUntil and Advance run their work.
  void StartKubelets(SimulatedKubeletOptions options = {}) {
    kubelets_.reset();
    options.run_thread = false;
    kubelets_ = std::make_unique<SimulatedKubelets>(rest_, &clock_, options);
    ASSERT_TRUE(kubelets_->Start().ok());
    ASSERT_TRUE(RunUntil([&] { return kubelets_->HasSynced(); }));
  }

  // Runs the kubelets' due work, taking each informer event as it arrives, until `done`.
  bool RunUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 400; ++i) {
      kubelets_->RunOnce();
      if (done()) return true;
      kubelets_->WaitForEvent(std::chrono::milliseconds(25));
    }
    return false;
  }
  void Advance(Duration d) {
    clock_.Advance(d);
    kubelets_->RunOnce();
  }
  nlohmann::json Get(const std::string& path) {
    auto got = rest_->Get(path);
    return got.ok() ? *got : nlohmann::json();
  }

  controllers::TestApiServer api_;
  client::RestClient* rest_ = nullptr;
  FakeClock clock_;
  std::unique_ptr<SimulatedKubelets> kubelets_;
};

}  // namespace berth::kubelet::testing
