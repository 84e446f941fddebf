// One Event through two APIs: the field renaming between events.k8s.io/v1 and core/v1 (the
// store's keeping of one object for both is tested in store_test.cc).
#include "apiserver/event_conversion.h"

#include <gtest/gtest.h>

#include "apiserver/event_test_builders.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

using testing::PodRef;
using testing::SchedulerEvent;

TEST(EventConversionTest, RenamesEveryFieldBothWaysAndLosesNothing) {
  Json events = SchedulerEvent("e", "p");
  events["related"] = PodRef("q");
  events["series"] = {{"count", 3}, {"lastObservedTime", "2026-11-27T12:01:00.000000Z"}};
  events["deprecatedSource"] = {{"component", "kubelet"}, {"host", "node-1"}};
  events["deprecatedFirstTimestamp"] = "2026-11-27T11:00:00Z";
  events["deprecatedLastTimestamp"] = "2026-11-27T11:30:00Z";
  events["deprecatedCount"] = 4;

  Json core = CoreEventFromEventsV1(events);
  EXPECT_EQ(core["apiVersion"], "v1");
  EXPECT_EQ(core["involvedObject"], PodRef("p"));
  EXPECT_EQ(core["message"], events["note"]);
  EXPECT_EQ(core["reportingComponent"], "default-scheduler");
  EXPECT_EQ(core["reportingInstance"], "default-scheduler-berth");
  EXPECT_EQ(core["source"], events["deprecatedSource"]);
  EXPECT_EQ(core["firstTimestamp"], "2026-11-27T11:00:00Z");
  EXPECT_EQ(core["lastTimestamp"], "2026-11-27T11:30:00Z");
  EXPECT_EQ(core["count"], 4);
  EXPECT_EQ(core["series"], events["series"]);
  EXPECT_EQ(core["related"], PodRef("q"));
  EXPECT_EQ(core["eventTime"], events["eventTime"]);
  for (const char* gone :
       {"regarding", "note", "reportingController", "deprecatedSource", "deprecatedFirstTimestamp",
        "deprecatedLastTimestamp", "deprecatedCount"}) {
    EXPECT_FALSE(core.contains(gone)) << gone;
  }
  EXPECT_EQ(EventsV1FromCoreEvent(core), events);
}

TEST(EventConversionTest, AbsentFieldsStayAbsent) {
  Json core = CoreEventFromEventsV1(
      {{"metadata", {{"name", "e"}}}, {"reason", "Scheduled"}, {"type", "Normal"}});
  EXPECT_EQ(core, (Json{{"apiVersion", "v1"},
                        {"kind", "Event"},
                        {"metadata", {{"name", "e"}}},
                        {"reason", "Scheduled"},
                        {"type", "Normal"}}));
}

}  // namespace
}  // namespace berth::apiserver
