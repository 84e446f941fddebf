#include "scenario/replay_steps.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace berth::scenario {
namespace {

using Json = nlohmann::json;

Json Line(const std::string& time, const std::string& event, Json resource) {
  return {{"time", time}, {"event", event}, {"resource", std::move(resource)}};
}

Json Pod(const std::string& name, const std::string& ns, const std::string& node = "",
         const std::string& phase = "") {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", ns},
                {"uid", "u-" + name},
                {"resourceVersion", "7"},
                {"ownerReferences", {{{"kind", "ReplicaSet"}, {"name", "rs"}, {"uid", "x"}}}}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  if (!phase.empty()) pod["status"] = {{"phase", phase}};
  return pod;
}

TEST(ReplayStepsTest, TurnsRecordedChangesIntoTimedSteps) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("replay-steps-" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    const Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}};
    for (const Json& l :
         {Line("2026-11-01T12:00:00Z", "Add", node),
          Line("2026-11-01T12:00:10Z", "Add", Pod("a", "team")),
          Line("2026-11-01T12:00:11Z", "Update", Pod("a", "team", "n1")),     // its binding
          Line("2026-11-01T12:00:20Z", "Update", Pod("b", "default", "n1")),  // there before
          Line("2026-11-01T12:01:00Z", "Update", Pod("a", "team", "n1", "Succeeded")),
          Line("2026-11-01T12:02:00Z", "Delete", Pod("a", "team", "n1", "Succeeded")),
          Line("2026-11-01T12:03:00Z", "Delete", node)}) {
      out << l.dump() << "\n";
    }
  }
  auto s = ScenarioFromRecording(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->steps.size(), 7u);
  EXPECT_EQ(s->steps[0].kind, StepKind::kCreate);  // the node
  EXPECT_EQ(*s->steps[0].at, Duration::zero());
  // The pod's namespace first, then the pod: pending, without owners or server fields.
  EXPECT_EQ(s->steps[1].objects[0]["kind"], "Namespace");
  EXPECT_EQ(s->steps[1].objects[0]["metadata"]["name"], "team");
  const Json& a = s->steps[2].objects[0];
  EXPECT_EQ(*s->steps[2].at, std::chrono::seconds(10));
  EXPECT_FALSE(a["spec"].contains("nodeName"));
  EXPECT_FALSE(a["metadata"].contains("ownerReferences"));
  EXPECT_FALSE(a["metadata"].contains("uid"));
  EXPECT_FALSE(a["metadata"].contains("resourceVersion"));
  // Its binding is not replayed; a pod first seen bound keeps its node.
  EXPECT_EQ(s->steps[3].objects[0]["metadata"]["name"], "b");
  EXPECT_EQ(s->steps[3].objects[0]["spec"]["nodeName"], "n1");
  EXPECT_FALSE(s->steps[3].objects[0].contains("status"));
  // Finished: deleted once (the later Delete line adds nothing).
  EXPECT_EQ(s->steps[4].kind, StepKind::kDelete);
  EXPECT_EQ(*s->steps[4].at, std::chrono::minutes(1));
  EXPECT_EQ(s->steps[5].kind, StepKind::kDelete);
  EXPECT_EQ(s->steps[5].objects[0]["kind"], "Node");
  EXPECT_EQ(*s->steps[5].at, std::chrono::minutes(3));
  EXPECT_EQ(s->steps[6].kind, StepKind::kCheckpoint);
}

TEST(ReplayStepsTest, ErrorsNameTheLine) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("replay-steps-bad-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(path) << "{\"time\": \"2026-11-01T12:00:00Z\", \"event\": \"Add\"}\n";
  auto s = ScenarioFromRecording(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(":1"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace berth::scenario
