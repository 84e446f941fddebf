// berth record: the lines kube-scheduler-simulator's recorder writes, for the initial list and
// for each later change, against Berth's own API server; and errors that say what went wrong.
#include "client/recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "client/api_server_test_util.h"

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
