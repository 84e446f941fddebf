// The DaemonSet controller against the embedded API server, through informers and the REST
// client. Syncs are driven by the test (Sync(key)) after waiting for the informers to show what
// the previous step wrote, so nothing depends on timing.
#include "controllers/daemon_set.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"

namespace berth::controllers {
namespace {

class DaemonSetControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-ds-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    nodes_ = std::make_unique<SharedInformer>(rest_, "/api/v1/nodes", "Node", nullptr);
    sets_ =
        std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/daemonsets", "DaemonSet", nullptr);
    revisions_ = std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/controllerrevisions",
                                                  "ControllerRevision", nullptr);
    controller_ = std::make_unique<DaemonSetController>(rest_, pods_.get(), nodes_.get(),
                                                        sets_.get(), revisions_.get(),
                                                        ControllerOptions{&clock_, 1, nullptr});
    for (auto* i : {pods_.get(), nodes_.get(), sets_.get(), revisions_.get()}) i->Start();
    WaitFor([&] {
      return pods_->HasSynced() && nodes_->HasSynced() && sets_->HasSynced() &&
             revisions_->HasSynced();
    });
  }
  void TearDown() override {
    // Informers first: their threads call the controller's handlers.
    for (auto* i : {pods_.get(), nodes_.get(), sets_.get(), revisions_.get()}) {
      if (i) i->Stop();
    }
    controller_.reset();
    api_.Stop();
  }
  static Json DaemonSet(const std::string& ns) {
    return Json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet",
      "metadata":{"name":"agent","namespace":")" +
                       ns + R"("},
      "spec":{"selector":{"matchLabels":{"app":"agent"}},
        "template":{"metadata":{"labels":{"app":"agent"}},
                    "spec":{"containers":[{"name":"c","image":"pause"}]}}}})");
  }
  void AddNodes(int n) {
    for (int i = 0; i < n; ++i) {
      Json node = {{"apiVersion", "v1"},
                   {"kind", "Node"},
                   {"metadata", {{"name", "n" + std::to_string(i)}}}};
      ASSERT_TRUE(rest_->Post("/api/v1/nodes", node).ok());
    }
    WaitFor([&] { return nodes_->List().size() == static_cast<size_t>(n); });
  }
  size_t PodsIn(const std::string& ns) {
    auto pods = rest_->Get("/api/v1/namespaces/" + ns + "/pods");
    EXPECT_TRUE(pods.ok());
    return pods.ok() ? (*pods)["items"].size() : 0;
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'700'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> pods_, nodes_, sets_, revisions_;
  std::unique_ptr<DaemonSetController> controller_;
};

TEST_F(DaemonSetControllerTest, CreatesOnePodPerNodePinnedToItsNode) {
  AddNodes(3);
  ASSERT_TRUE(
      rest_->Post("/apis/apps/v1/namespaces/default/daemonsets", DaemonSet("default")).ok());
  WaitFor([&] { return sets_->Get("default/agent").has_value(); });
  ASSERT_TRUE(controller_->Sync("default/agent").ok());
  WaitFor([&] { return pods_->List().size() >= 3; });
  std::set<std::string> pinned;
  for (const Object& o : pods_->List()) {
    const Json& pod = DocOf(o);
    const Json& terms = pod["spec"]["affinity"]["nodeAffinity"]
                           ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    ASSERT_EQ(terms.size(), 1u) << pod.dump();
    pinned.insert(terms[0]["matchFields"][0]["values"][0].get<std::string>());
  }
  EXPECT_EQ(pinned, (std::set<std::string>{"n0", "n1", "n2"}));
  WaitFor([&] { return controller_->expectations().Satisfied("default/agent"); });
}

TEST_F(DaemonSetControllerTest, ASetInATerminatingNamespaceStopsCreatingWithoutAnError) {
  // As against kube-apiserver: the namespace stays Terminating with the set in it, and every
  // pod create is refused with the NamespaceTerminating cause.
  api_.server().namespace_deleter().Stop();
  CreateNamespace(*rest_, "leaving");
  ASSERT_TRUE(
      rest_->Post("/apis/apps/v1/namespaces/leaving/daemonsets", DaemonSet("leaving")).ok());
  WaitFor([&] { return sets_->Get("leaving/agent").has_value(); });
  // A first sync without nodes writes the revision only, as before the namespace's deletion.
  ASSERT_TRUE(controller_->Sync("leaving/agent").ok());
  WaitFor([&] { return revisions_->List().size() == 1; });
  AddNodes(4);
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/leaving").ok());

  // Not an error (the worker loop neither retries nor logs it), and no creation left expected.
  auto synced = controller_->Sync("leaving/agent");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  EXPECT_TRUE(controller_->expectations().Satisfied("leaving/agent"));
  EXPECT_EQ(PodsIn("leaving"), 0u);
}

TEST_F(DaemonSetControllerTest, ARevisionRefusedInATerminatingNamespaceIsNotAnError) {
  api_.server().namespace_deleter().Stop();
  CreateNamespace(*rest_, "leaving");
  ASSERT_TRUE(
      rest_->Post("/apis/apps/v1/namespaces/leaving/daemonsets", DaemonSet("leaving")).ok());
  AddNodes(2);
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/leaving").ok());
  WaitFor([&] { return sets_->Get("leaving/agent").has_value(); });
  auto synced = controller_->Sync("leaving/agent");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  EXPECT_EQ(PodsIn("leaving"), 0u);
  EXPECT_TRUE(controller_->expectations().Satisfied("leaving/agent"));
}

}  // namespace
}  // namespace berth::controllers
