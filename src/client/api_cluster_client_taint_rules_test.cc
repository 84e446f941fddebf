// ApiClusterClient with DeviceTaintRules: the slices it lists carry the taints of the rules the
// API server holds, and a rule created or deleted reaches a DraEventHandler as an update of
// the slices whose taints it changed, with a new slice generation.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/api_cluster_client.h"
#include "client/client_test_util.h"
#include "testing/ignoring_event_handler.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

// The slice events it is told of: how many devices of the new slice carry a taint.
class SliceEvents final : public berth::testing::IgnoringEventHandler, public DraEventHandler {
 public:
  void OnDraEvent(const DraClusterEvent& event, const DraEventObject&,
                  const DraEventObject& new_object) override {
    if (event.resource != DraEventResource::kResourceSlice) return;
    const ResourceSlice* s = DraObjectAs<ResourceSlice>(new_object);
    int tainted = 0;
    if (s)
      for (const Device& d : s->spec.devices) tainted += d.taints.empty() ? 0 : 1;
    std::lock_guard lock(mu_);
    seen_.push_back({event.actions, tainted});
  }
  std::vector<std::pair<uint32_t, int>> Seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<uint32_t, int>> seen_;
};

// Devices of the listed slice named `name` that carry a taint of key `key`.
int TaintedDevices(const ApiClusterClient& client, const std::string& name,
                   const std::string& key) {
  int n = 0;
  for (const auto& s : client.ListResourceSlices()) {
    if (s->metadata.name != name) continue;
    for (const Device& d : s->spec.devices)
      for (const DeviceTaint& t : d.taints) n += t.key == key ? 1 : 0;
  }
  return n;
}

TEST_F(ApiServerFixture, ListedSlicesCarryTheDeviceTaintRulesTaints) {
  Start();
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));
  SliceEvents events;
  client.SetEventHandler(&events);
  client.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto wait = [&](const char* what, const std::function<bool()>& done) {
    SCOPED_TRACE(what);
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(done());
  };
  for (const char* node : {"node-1", "node-2"}) {
    auto slice = Json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
        "spec":{"driver":"gpu.example.com","devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}})");
    slice["metadata"]["name"] = std::string(node) + "-gpu";
    slice["spec"]["nodeName"] = node;
    slice["spec"]["pool"] = {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}};
    auto posted = rest_->Post("/apis/resource.k8s.io/v1/resourceslices", slice);
    ASSERT_TRUE(posted.ok()) << posted.error().message;
  }
  wait("slices listed", [&] { return client.ListResourceSlices().size() == 2; });
  const uint64_t before = DraSliceGenerationOf(client)->ResourceSliceGeneration();
  const size_t events_before = events.Seen().size();

  auto rule = Json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",
      "metadata":{"name":"maintenance"},
      "spec":{"deviceSelector":{"pool":"node-2"},
              "taint":{"key":"example.com/maintenance","effect":"NoSchedule"}}})");
  auto posted = rest_->Post("/apis/resource.k8s.io/v1/devicetaintrules", rule);
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  wait("node-2's devices tainted",
       [&] { return TaintedDevices(client, "node-2-gpu", "example.com/maintenance") == 2; });
  EXPECT_EQ(TaintedDevices(client, "node-1-gpu", "example.com/maintenance"), 0);
  EXPECT_GT(DraSliceGenerationOf(client)->ResourceSliceGeneration(), before);
  auto seen = events.Seen();
  ASSERT_EQ(seen.size(), events_before + 1);
  EXPECT_EQ(seen.back(), (std::pair<uint32_t, int>{kUpdateOther, 2}));
  // The server set the taint's timeAdded, which the listed taint carries.
  for (const auto& s : client.ListResourceSlices())
    if (s->metadata.name == "node-2-gpu") EXPECT_GT(s->spec.devices[0].taints[0].time_added, 0);

  ASSERT_TRUE(rest_->Delete("/apis/resource.k8s.io/v1/devicetaintrules/maintenance").ok());
  wait("untainted",
       [&] { return TaintedDevices(client, "node-2-gpu", "example.com/maintenance") == 0; });
  seen = events.Seen();
  ASSERT_EQ(seen.size(), events_before + 2);
  EXPECT_EQ(seen.back(), (std::pair<uint32_t, int>{kUpdateOther, 0}));
  client.Stop();
}

}  // namespace
}  // namespace berth::client
