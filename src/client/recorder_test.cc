// berth record: the lines kube-scheduler-simulator's recorder writes, for the initial list and
// for each later change, against Berth's own API server; and errors that say what went wrong.
#include "client/recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "client/api_server_test_util.h"
#include "client/client_test_util.h"
#include "net/http_server.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

TEST(RecorderTest, TimeIsGoRfc3339NanoInUtc) {
  const TimePoint t{std::chrono::seconds(1764369601)};  // 2025-11-28T22:40:01Z
  EXPECT_EQ(FormatRecordTime(t), "2025-11-28T22:40:01Z");
  EXPECT_EQ(FormatRecordTime(t + std::chrono::milliseconds(500)), "2025-11-28T22:40:01.5Z");
  EXPECT_EQ(FormatRecordTime(t + std::chrono::nanoseconds(1)), "2025-11-28T22:40:01.000000001Z");
}

std::vector<Json> ReadLines(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::vector<Json> out;
  char* line = nullptr;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) out.push_back(Json::parse(line));
  free(line);
  return out;
}

// Waits (bounded) until `writer` has written `n` lines: the watches run on their own threads.
bool WaitForLines(const RecordWriter& writer, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (writer.lines() < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

Json PodDoc(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "pause"}}}}}}};
}

TEST(RecorderTest, WritesTheListThenEveryChangeInTheRecorderFormat) {
  controllers::TestApiServer api;
  api.Start("recorder-test");
  RestClient* rest = api.rest();
  ASSERT_TRUE(rest->Post("/api/v1/nodes",
                         {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}})
                  .ok());
  ASSERT_TRUE(rest->Post("/api/v1/namespaces/default/pods", PodDoc("before")).ok());

  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  RecordWriter writer(f);
  FakeClock clock(TimePoint{std::chrono::seconds(1764369601)});
  RecorderOptions options;
  options.clock = &clock;
  options.kinds = {{"/api/v1/nodes", "v1", "Node", false},
                   {"/api/v1/pods", "v1", "Pod", false},
                   {"/apis/example.com/v1/widgets", "example.com/v1", "Widget", true}};
  std::vector<std::string> notes;
  options.log = [&](const std::string& n) { notes.push_back(n); };
  ClusterRecorder recorder(rest, &writer, options);
  ASSERT_TRUE(recorder.Start().ok());
  // The kind the server does not serve is skipped with a note, not an error.
  EXPECT_EQ(recorder.kinds(), (std::vector<std::string>{"Node", "Pod"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("not served"), std::string::npos);
  ASSERT_EQ(writer.lines(), 2);  // the initial list, written before Start returns

  ASSERT_TRUE(rest->Post("/api/v1/namespaces/default/pods", PodDoc("during")).ok());
  ASSERT_TRUE(WaitForLines(writer, 3));
  ASSERT_TRUE(rest->Patch("/api/v1/namespaces/default/pods/during",
                          {{"metadata", {{"labels", {{"app", "web"}}}}}},
                          "application/merge-patch+json")
                  .ok());
  ASSERT_TRUE(WaitForLines(writer, 4));
  ASSERT_TRUE(
      rest->Delete("/api/v1/namespaces/default/pods/during", {{"gracePeriodSeconds", 0}}).ok());
  ASSERT_TRUE(WaitForLines(writer, 5));
  recorder.Stop();

  std::vector<Json> lines = ReadLines(f);
  std::fclose(f);
  api.Stop();
  ASSERT_EQ(lines.size(), 5u);
  for (const Json& l : lines) {
    ASSERT_EQ(l.size(), 3u) << l.dump();
    EXPECT_EQ(l["time"], "2025-11-28T22:40:01Z");
  }
  EXPECT_EQ(lines[0]["event"], "Add");
  EXPECT_EQ(lines[0]["resource"]["kind"], "Node");  // list items get their kind back
  EXPECT_EQ(lines[0]["resource"]["apiVersion"], "v1");
  EXPECT_EQ(lines[1]["resource"]["metadata"]["name"], "before");
  EXPECT_EQ(lines[2]["event"], "Add");
  EXPECT_EQ(lines[2]["resource"]["metadata"]["name"], "during");
  EXPECT_EQ(lines[3]["event"], "Update");
  EXPECT_EQ(lines[3]["resource"]["metadata"]["labels"]["app"], "web");
  EXPECT_FALSE(lines[3]["resource"]["metadata"].contains("managedFields"));
  EXPECT_EQ(lines[4]["event"], "Delete");
  EXPECT_EQ(lines[4]["resource"],
            (Json{{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata", {{"name", "during"}, {"namespace", "default"}}}}));
}

// A watch the server ends with 410 Gone (its resourceVersion compacted away) is followed by a
// relist whose differences from what was recorded become lines: an object changed meanwhile is
// an Update, a new one an Add, one missing from the relist a Delete, an unchanged one nothing.
// The watch then resumes from the relist's resourceVersion.
TEST(RecorderTest, AWatchEndedWithGoneRelistsAndWritesWhatChangedMeanwhile) {
  std::mutex mu;
  int lists = 0;
  std::set<std::string> watched_from;
  const auto pod = [](const std::string& name, const std::string& rv) {
    Json p = PodDoc(name);
    p.erase("apiVersion");
    p.erase("kind");
    p["metadata"]["resourceVersion"] = rv;
    return p;
  };
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    std::lock_guard lock(mu);
    if (req.Query("watch")) {
      const std::string from = req.Query("resourceVersion").value_or("");
      watched_from.insert(from);
      // The first watch is too old; later ones end at once with no events.
      if (from == "10")
        r.body = Json{{"type", "ERROR"},
                      {"object",
                       {{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"status", "Failure"},
                        {"reason", "Expired"},
                        {"code", 410},
                        {"message", "too old resource version: 10 (15)"}}}}
                     .dump() +
                 "\n";
      return r;
    }
    Json list = {{"kind", "PodList"}, {"apiVersion", "v1"}};
    if (lists++ == 0) {
      list["metadata"] = {{"resourceVersion", "10"}};
      list["items"] = {pod("a", "1"), pod("b", "1"), pod("c", "1")};
    } else {
      list["metadata"] = {{"resourceVersion", "20"}};
      list["items"] = {pod("a", "1"), pod("b", "2"), pod("d", "3")};
    }
    r.body = list.dump();
    return r;
  });
  ASSERT_TRUE(server.ok());
  auto rest =
      RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", RestOptions{.qps = 0});
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  RecordWriter writer(f);
  FakeClock clock(TimePoint{std::chrono::seconds(1764369601)});
  RecorderOptions options;
  options.clock = &clock;
  options.kinds = {{"/api/v1/pods", "v1", "Pod", false}};
  options.watch_timeout_seconds = 1;
  ClusterRecorder recorder(rest.get(), &writer, options);
  ASSERT_TRUE(recorder.Start().ok());
  ASSERT_TRUE(WaitForLines(writer, 6));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool resumed = false;
  while (!resumed && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard lock(mu);
    resumed = watched_from.count("20") > 0;
  }
  recorder.Stop();
  std::vector<Json> lines = ReadLines(f);
  std::fclose(f);
  EXPECT_TRUE(resumed) << "the watch did not resume from the relist's resourceVersion";
  ASSERT_EQ(lines.size(), 6u);
  const auto is = [&](size_t i, const char* event, const char* name) {
    EXPECT_EQ(lines[i]["event"], event) << i;
    EXPECT_EQ(lines[i]["resource"]["metadata"]["name"], name) << i;
    EXPECT_EQ(lines[i]["resource"]["kind"], "Pod") << i;
  };
  is(0, "Add", "a");
  is(1, "Add", "b");
  is(2, "Add", "c");
  is(3, "Update", "b");
  EXPECT_EQ(lines[3]["resource"]["metadata"]["resourceVersion"], "2");
  is(4, "Add", "d");
  is(5, "Delete", "c");
  EXPECT_EQ(lines[5]["resource"]["metadata"], (Json{{"name", "c"}, {"namespace", "default"}}));
}

TEST(RecorderTest, AnUnreachableServerIsAnErrorThatSaysSo) {
  net::HttpClientOptions ho;
  ho.server = "http://127.0.0.1:1";
  ho.timeout = std::chrono::seconds(2);
  auto http = net::HttpClient::Create(ho);
  ASSERT_TRUE(http.ok());
  RestClient rest(std::move(http).value(), RestOptions{.qps = 0, .max_retries = 0});
  std::FILE* f = std::tmpfile();
  RecordWriter writer(f);
  ClusterRecorder recorder(&rest, &writer, {});
  auto started = recorder.Start();
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("unreachable"), std::string::npos)
      << started.error().message;
  EXPECT_NE(started.error().message.find("Namespace"), std::string::npos);
  EXPECT_EQ(writer.lines(), 0);
  std::fclose(f);
}

}  // namespace
}  // namespace berth::client
