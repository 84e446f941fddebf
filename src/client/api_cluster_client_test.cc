#include "client/api_cluster_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/server.h"
#include "client/client_test_util.h"
#include "net/http_server.h"
#include "testing/ignoring_event_handler.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

// A binding answered 409 is settled by reading the pod; when that read fails too (the
// connection cut again, the server briefly unavailable) beyond the REST client's own retries,
// it is read again rather than the earlier, successful binding being reported as a conflict.
// Bindings go in large batches only to Berth's own server, as its /version names it; any
// other answer, readable or not, gets the pipeline for servers that answer requests in turn.
TEST(ApiClusterClientTest, BindingPipelineFollowsTheServersVersion) {
  const BindingPipeline own = BindingPipelineFor(
      R"({"major":"1","minor":"32","gitVersion":"v1.32.0-berth","platform":"linux/amd64"})");
  EXPECT_EQ(own.connections, kOwnServerBindings.connections);
  EXPECT_EQ(own.batch, kOwnServerBindings.batch);
  for (const char* other : {R"({"major":"1","minor":"23","gitVersion":"v1.23.0"})",
                            R"({"gitVersion":7})", "not json", ""}) {
    const BindingPipeline p = BindingPipelineFor(other);
    EXPECT_EQ(p.connections, BindingPipeline{}.connections) << other;
    EXPECT_EQ(p.batch, BindingPipeline{}.batch) << other;
  }
  EXPECT_GT(BindingPipeline{}.connections, kOwnServerBindings.connections);
  EXPECT_LT(BindingPipeline{}.batch, kOwnServerBindings.batch);
}

TEST(ApiClusterClientTest, BindConflictSettledThroughAFailingRead) {
  std::atomic<int> reads{0};
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method == "POST") {
      r.status = 409;
      r.body = R"({"kind":"Status","reason":"Conflict","message":"pod p is already assigned"})";
    } else if (reads++ < 4) {
      r.status = 503;
      r.body = R"({"kind":"Status","message":"unavailable"})";
    } else {
      r.body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",)"
               R"("uid":"u1"},"spec":{"nodeName":"n1"}})";
    }
    return r;
  });
  ASSERT_TRUE(server.ok());
  RestOptions ro{.qps = 0};
  ro.initial_backoff = std::chrono::milliseconds(1);
  ro.max_retries = 1;
  ApiClusterClient client(RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro));
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "u1";
  auto bound = client.Bind(pod, "n1");
  EXPECT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(reads.load(), 5);
  auto elsewhere = client.Bind(pod, "n2");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ErrorCode::kConflict);
}

// DeletePodThen returns at once; `done` is called on the victim writer once the API server has
// answered the deletion: null when the pod is gone (404 included), the error otherwise.
TEST(ApiClusterClientTest, DeletePodThenAnswersWhenTheDeletionIsOver) {
  std::promise<void> answer;
  std::shared_future<void> answered = answer.get_future().share();
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method == "PATCH") {  // the DisruptionTarget condition
      r.body = "{}";
    } else if (req.method == "DELETE" && req.path.ends_with("/held")) {
      answered.wait();
      r.body = "{}";
    } else if (req.method == "DELETE" && req.path.ends_with("/gone")) {
      r.status = 404;
      r.body = R"({"kind":"Status","reason":"NotFound","message":"not found"})";
    } else {
      r.status = 403;
      r.body = R"({"kind":"Status","reason":"Forbidden","message":"forbidden"})";
    }
    return r;
  });
  ASSERT_TRUE(server.ok());
  RestOptions ro{.qps = 0};
  ApiClusterClient client(RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro));
  auto victim = [](const std::string& name) {
    berth::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = "default";
    return pod;
  };
  auto ask = [&](const std::string& name) {
    auto outcome = std::make_shared<std::promise<std::string>>();
    client.DeletePodThen(victim(name), [outcome](const Error* error) {
      outcome->set_value(error ? error->message : "deleted");
    });
    return outcome->get_future();
  };
  auto held = ask("held");
  EXPECT_EQ(held.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  EXPECT_EQ(ask("gone").get(), "deleted");
  EXPECT_NE(ask("refused").get().find("forbidden"), std::string::npos);
  answer.set_value();
  EXPECT_EQ(held.get(), "deleted");
}

// Bindings and events are written without a document tree: what arrives must still be the
// JSON the API expects, with text escaped, in events.k8s.io/v1 or, when the server does not
// serve that group, core/v1.
TEST(ApiClusterClientTest, BindingAndEventBodiesForBothEventApis) {
  for (bool events_api : {true, false}) {
    std::mutex mu;
    std::map<std::string, std::vector<Json>> posted;  // path -> bodies
    auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
      net::HttpResponse r;
      if (req.method != "POST") {  // informers: empty lists, short watches
        r.body = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
        return r;
      }
      if (!events_api && req.path.rfind("/apis/events.k8s.io/", 0) == 0) {
        r.status = 404;
        r.body = R"({"kind":"Status","reason":"NotFound","message":"not found"})";
        return r;
      }
      std::lock_guard lock(mu);
      posted[req.path].push_back(Json::parse(req.body));
      r.status = 201;
      r.body = "{}";
      return r;
    });
    ASSERT_TRUE(server.ok());
    RestOptions ro{.qps = 0};
    ApiClusterClient client(
        RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro));
    berth::Pod pod;
    pod.metadata.name = "web-1";
    pod.metadata.namespace_ = "team-a";
    pod.metadata.uid = "u-1";
    pod.metadata.resource_version = "42";
    ASSERT_TRUE(client.Bind(pod, "node-7").ok());
    client.Start();
    const std::string message = "0/3 nodes are available: \"quoted\"\n\ttab \\ back";
    client.RecordPodEvent(pod, "Warning", "FailedScheduling", "Scheduling", message,
                          "default-scheduler");
    client.Stop();

    std::lock_guard lock(mu);
    const auto& bindings = posted["/api/v1/namespaces/team-a/pods/web-1/binding"];
    ASSERT_EQ(bindings.size(), 1u);
    EXPECT_EQ(bindings[0], Json::parse(R"({"apiVersion":"v1","kind":"Binding",
        "metadata":{"name":"web-1","namespace":"team-a","uid":"u-1"},
        "target":{"apiVersion":"v1","kind":"Node","name":"node-7"}})"));
    const Json pod_ref = {{"apiVersion", "v1"},    {"kind", "Pod"},           {"name", "web-1"},
                          {"namespace", "team-a"}, {"resourceVersion", "42"}, {"uid", "u-1"}};
    if (events_api) {
      const auto& events = posted["/apis/events.k8s.io/v1/namespaces/team-a/events"];
      ASSERT_EQ(events.size(), 1u);
      const Json& ev = events[0];
      EXPECT_EQ(ev["apiVersion"], "events.k8s.io/v1");
      EXPECT_EQ(ev["kind"], "Event");
      EXPECT_EQ(ev["metadata"]["namespace"], "team-a");
      EXPECT_EQ(ev["metadata"]["name"].get<std::string>().rfind("web-1.", 0), 0u);
      EXPECT_EQ(ev["note"], message);
      EXPECT_EQ(ev["reason"], "FailedScheduling");
      EXPECT_EQ(ev["type"], "Warning");
      EXPECT_EQ(ev["action"], "Scheduling");
      EXPECT_EQ(ev["reportingController"], "default-scheduler");
      EXPECT_EQ(ev["reportingInstance"], "default-scheduler-berth");
      EXPECT_EQ(ev["regarding"], pod_ref);
      EXPECT_EQ(ev["eventTime"].get<std::string>().size(), 27u);  // 2026-11-27T10:00:00.000000Z
    } else {
      const auto& events = posted["/api/v1/namespaces/team-a/events"];
      ASSERT_EQ(events.size(), 1u);
      const Json& ev = events[0];
      EXPECT_EQ(ev["apiVersion"], "v1");
      EXPECT_EQ(ev["message"], message);
      EXPECT_EQ(ev["involvedObject"], pod_ref);
      EXPECT_EQ(ev["source"]["component"], "default-scheduler");
      EXPECT_EQ(ev["count"], 1);
      const std::string first = ev["firstTimestamp"];
      EXPECT_EQ(first.size(), 20u);
      EXPECT_EQ(first.back(), 'Z');
      EXPECT_EQ(first, ev["lastTimestamp"]);
      EXPECT_EQ(ev["eventTime"].get<std::string>().substr(0, 19), first.substr(0, 19));
    }
  }
}

// Events queued together go out together, pipelined over several connections: the server holds
// every answer until 20 requests wait at once (writers sending one event per round trip would
// never have more than two outstanding), and every event arrives once. How many are outstanding
// at the very end depends on how the batches split, so a tail that stops growing is answered
// after a quiet moment; the test asserts that the holding point was reached.
TEST(ApiClusterClientTest, QueuedEventsAreSentTogether) {
  std::mutex mu;
  std::set<std::string> names;
  std::vector<std::function<void(net::HttpResponse)>> waiting;
  size_t most_waiting = 0;
  auto last_arrival = std::chrono::steady_clock::now();
  const auto answer_all = [&] {  // with mu held
    for (auto& w : waiting) {
      net::HttpResponse created;
      created.status = 201;
      created.body = "{}";
      w(std::move(created));
    }
    waiting.clear();
  };
  net::HttpServerOptions options;
  options.threads = 1;
  options.pin_connections = true;
  auto server = net::HttpServer::Start(options, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method != "POST") {
      r.body = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
      return r;
    }
    std::lock_guard lock(mu);
    names.insert(Json::parse(req.body)["metadata"]["name"].get<std::string>());
    r.deferred = [&](std::function<void(net::HttpResponse)> reply) {
      std::lock_guard lock(mu);
      waiting.push_back(std::move(reply));
      last_arrival = std::chrono::steady_clock::now();
      most_waiting = std::max(most_waiting, waiting.size());
      if (waiting.size() >= 20) answer_all();
    };
    return r;
  });
  ASSERT_TRUE(server.ok());
  std::jthread tail([&](std::stop_token stop) {
    while (!stop.stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lock(mu);
      if (!waiting.empty() &&
          std::chrono::steady_clock::now() - last_arrival > std::chrono::milliseconds(500)) {
        answer_all();
      }
    }
    std::lock_guard lock(mu);
    answer_all();
  });
  ApiClusterClient client(
      RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", RestOptions{.qps = 0}));
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  for (int i = 0; i < 200; ++i) {
    client.RecordPodEvent(pod, "Normal", "Scheduled", "Binding", "bound", "default-scheduler");
  }
  client.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool all_arrived = false;
  while (!all_arrived && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard lock(mu);
    all_arrived = names.size() == 200 && waiting.empty();
  }
  client.Stop();
  tail.request_stop();
  tail.join();
  std::lock_guard lock(mu);
  EXPECT_TRUE(all_arrived) << names.size() << " events arrived";
  EXPECT_GE(most_waiting, 20u) << "events were not sent together";
}

// Events wait in a bounded queue; past it they are dropped, and the log says so once, not once
// per event.
TEST(ApiClusterClientTest, EventsPastTheQueueAreDroppedAndReportedOnce) {
  std::vector<std::string> logged;
  ApiClusterClient client(RestFor("http://127.0.0.1:1", "", RestOptions{.qps = 0}),
                          [&](const std::string& line) { logged.push_back(line); });
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  // Not started: nothing writes the queue out.
  for (int i = 0; i < 10003; ++i) {
    client.RecordPodEvent(pod, "Normal", "Scheduled", "Binding", "bound", "default-scheduler");
  }
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0].rfind("events dropped: 1 since the last report (10000 wait", 0), 0u)
      << logged[0];
}

// Stopping with a backlog of events: what is not written within the drain budget (3 s) is
// dropped and counted in the log, rather than written at the rate limit's pace (1,000 events
// at 50 requests a second would take 20 s, past the kubelet's 30 s with the rest of a stop).
TEST(ApiClusterClientTest, StopWithABacklogDropsWhatTheDrainBudgetDoesNotWrite) {
  std::atomic<int> received{0};
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method == "POST") {
      ++received;
      r.status = 201;
      r.body = "{}";
    } else {
      r.body = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
    }
    return r;
  });
  ASSERT_TRUE(server.ok());
  std::mutex mu;
  std::vector<std::string> logged;
  ApiClusterClient client(RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "",
                                  RestOptions{.qps = 50, .burst = 1}),
                          [&](const std::string& line) {
                            std::lock_guard lock(mu);
                            logged.push_back(line);
                          });
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  for (int i = 0; i < 1000; ++i)
    client.RecordPodEvent(pod, "Normal", "Scheduled", "Binding", "bound", "default-scheduler");
  client.Start();
  const auto start = std::chrono::steady_clock::now();
  client.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_LT(received.load(), 1000);
  std::lock_guard lock(mu);
  bool said = false;
  for (const auto& line : logged)
    said = said || line.find("events not written within 3 s are dropped") != std::string::npos;
  EXPECT_TRUE(said) << ::testing::PrintToString(logged);
}

// A repeated binding (the answer to the first was lost) is answered 409 by the server and
// counts as done when the pod is bound to that node; a pod bound elsewhere, or recreated under
// another UID, is a Conflict, which the scheduler forgets rather than retries.
TEST_F(ApiServerFixture, BindAnsweredConflictIsSettledByThePod) {
  Start();
  for (const char* n : {"n1", "n2"}) {
    ASSERT_TRUE(
        rest_
            ->Post("/api/v1/nodes",
                   Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", n}}}})
            .ok());
  }
  auto created = rest_->Post("/api/v1/namespaces/default/pods", Pod("p"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = (*created)["metadata"]["uid"];
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));

  ASSERT_TRUE(client.Bind(pod, "n1").ok());
  auto again = client.Bind(pod, "n1");
  EXPECT_TRUE(again.ok()) << again.error().message;
  auto elsewhere = client.Bind(pod, "n2");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ErrorCode::kConflict);
  EXPECT_NE(elsewhere.error().message.find("already assigned to node \"n1\""), std::string::npos)
      << elsewhere.error().message;
  berth::Pod other = pod;
  other.metadata.uid = "another-uid";
  auto recreated = client.Bind(other, "n1");
  ASSERT_FALSE(recreated.ok());
  EXPECT_EQ(recreated.error().code, ErrorCode::kConflict);
  auto live = rest_->Get("/api/v1/namespaces/default/pods/p");
  ASSERT_TRUE(live.ok());
  EXPECT_EQ((*live)["spec"]["nodeName"], "n1");
}

// GangScheduling reads a group's members from an index of the pods informer: only the pods of
// that namespace and group, bound or not, and a deleted pod leaves it.
TEST_F(ApiServerFixture, SchedulingGroupMembersComeFromTheIndex) {
  Start();
  auto member = [&](const std::string& ns, const std::string& name, const std::string& group) {
    Json pod = Pod(name);
    if (!group.empty()) pod["spec"]["schedulingGroup"] = {{"podGroupName", group}};
    return rest_->Post("/api/v1/namespaces/" + ns + "/pods", pod);
  };
  ASSERT_TRUE(rest_
                  ->Post("/api/v1/namespaces", Json{{"apiVersion", "v1"},
                                                    {"kind", "Namespace"},
                                                    {"metadata", {{"name", "other"}}}})
                  .ok());
  ASSERT_TRUE(member("default", "a1", "a").ok());
  ASSERT_TRUE(member("default", "a2", "a").ok());
  ASSERT_TRUE(member("default", "b1", "b").ok());
  ASSERT_TRUE(member("default", "solo", "").ok());
  ASSERT_TRUE(member("other", "a9", "a").ok());
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));
  client.Start();
  auto names = [&](std::string_view ns, std::string_view group) {
    std::vector<std::string> out;
    for (const auto& p : client.ListSchedulingGroupMembers(ns, group)) {
      out.push_back(p->metadata.name);
    }
    return out;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!client.HasSynced() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(client.HasSynced());
  EXPECT_EQ(names("default", "a"), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(names("other", "a"), (std::vector<std::string>{"a9"}));
  EXPECT_TRUE(names("default", "c").empty());
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/default/pods/a1?gracePeriodSeconds=0").ok());
  while (names("default", "a").size() != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(names("default", "a"), (std::vector<std::string>{"a2"}));
  client.Stop();
}

// NodeVolumeLimits (VolumeLimitScaling) reads CSIDrivers from the informer's documents: the
// object's spec.preventPodSchedulingIfMissing, and none for a driver without an object.
TEST_F(ApiServerFixture, CSIDriversAreReadFromTheInformer) {
  Start();
  auto driver = [&](const std::string& name, std::optional<bool> prevent) {
    Json d = {{"apiVersion", "storage.k8s.io/v1"},
              {"kind", "CSIDriver"},
              {"metadata", {{"name", name}}},
              {"spec", Json::object()}};
    if (prevent) d["spec"]["preventPodSchedulingIfMissing"] = *prevent;
    auto made = rest_->Post("/apis/storage.k8s.io/v1/csidrivers", d);
    ASSERT_TRUE(made.ok()) << made.error().message;
  };
  driver("prevent.csi.example.com", true);
  driver("allow.csi.example.com", false);
  driver("unset.csi.example.com", std::nullopt);
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));
  client.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!client.HasSynced() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(client.HasSynced());
  auto prevent = FindCSIDriver(client, "prevent.csi.example.com");
  ASSERT_TRUE(prevent.has_value());
  EXPECT_TRUE(prevent->prevent_pod_scheduling_if_missing);
  auto allow = client.GetCSIDriver("allow.csi.example.com");
  ASSERT_TRUE(allow.has_value());
  EXPECT_FALSE(allow->prevent_pod_scheduling_if_missing);
  auto unset = client.GetCSIDriver("unset.csi.example.com");
  ASSERT_TRUE(unset.has_value());
  EXPECT_FALSE(unset->prevent_pod_scheduling_if_missing);
  EXPECT_FALSE(client.GetCSIDriver("missing.csi.example.com").has_value());
  client.Stop();
}

// Records the VolumeAttachment deletions the client reports.
class AttachmentDeletions final : public berth::testing::IgnoringEventHandler,
                                  public VolumeAttachmentEventHandler {
 public:
  void OnVolumeAttachmentDelete(const VolumeAttachmentInfo& va) override {
    std::lock_guard lock(mu);
    deleted.push_back(va);
  }
  std::mutex mu;
  std::vector<VolumeAttachmentInfo> deleted;
};

// NodeVolumeLimits reads VolumeAttachments from the informer's documents, by spec.nodeName, and
// a deletion reaches the scheduler's VolumeAttachmentEventHandler with the deleted object.
TEST_F(ApiServerFixture, VolumeAttachmentsAreListedByNodeAndDeletionsReported) {
  Start();
  auto attach = [&](const std::string& name, const std::string& node, const std::string& pv) {
    Json va = {{"apiVersion", "storage.k8s.io/v1"},
               {"kind", "VolumeAttachment"},
               {"metadata", {{"name", name}}},
               {"spec",
                {{"attacher", "disk.csi.example.com"},
                 {"nodeName", node},
                 {"source", {{"persistentVolumeName", pv}}}}}};
    auto made = rest_->Post("/apis/storage.k8s.io/v1/volumeattachments", va);
    ASSERT_TRUE(made.ok()) << made.error().message;
  };
  attach("va-2", "n1", "pv-2");
  attach("va-1", "n1", "pv-1");
  attach("va-3", "n2", "pv-3");
  AttachmentDeletions handler;
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));
  client.SetEventHandler(&handler);
  client.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!client.HasSynced() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(client.HasSynced());
  auto on_n1 = FindVolumeAttachments(client, "n1");
  ASSERT_EQ(on_n1.size(), 2u);
  EXPECT_EQ(on_n1[0].name, "va-1");
  EXPECT_EQ(on_n1[0].attacher, "disk.csi.example.com");
  EXPECT_EQ(on_n1[0].node_name, "n1");
  EXPECT_EQ(on_n1[0].persistent_volume_name, "pv-1");
  EXPECT_EQ(client.VolumeAttachmentsOn("n2").size(), 1u);
  EXPECT_TRUE(client.VolumeAttachmentsOn("n3").empty());

  ASSERT_TRUE(rest_->Delete("/apis/storage.k8s.io/v1/volumeattachments/va-1").ok());
  auto reported = [&] {
    std::lock_guard lock(handler.mu);
    return handler.deleted.size();
  };
  while (reported() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(reported(), 1u);
  EXPECT_EQ(handler.deleted[0].name, "va-1");
  EXPECT_EQ(handler.deleted[0].persistent_volume_name, "pv-1");
  EXPECT_EQ(client.VolumeAttachmentsOn("n1").size(), 1u);
  client.Stop();
}

}  // namespace
}  // namespace berth::client
