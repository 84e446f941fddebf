#include "plugins/queuesort/queuesort.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "testing/builders.h"

namespace berth {
namespace {

QueuedPodInfo Queued(std::optional<int32_t> priority, int64_t seconds) {
  auto b = testing::MakePod().Name("p");
  if (priority) b.Priority(*priority);
  QueuedPodInfo q;
  q.pod_info = b.Info();
  q.timestamp = TimePoint{} + std::chrono::seconds(seconds);
  return q;
}

TEST(PrioritySort, Less) {
  struct Case {
    std::string name;
    QueuedPodInfo a, b;
    bool want;
  };
  std::vector<Case> cases = {
      {"p1.priority less than p2.priority", Queued(100, 0), Queued(200, 0), false},
      {"p1.priority greater than p2.priority", Queued(200, 0), Queued(100, 0), true},
      {"equal priority. p1 is added to schedulingQ earlier than p2", Queued(100, 1), Queued(100, 2),
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1", Queued(100, 2), Queued(100, 1),
       false},
      {"missing priority counts as zero", Queued(std::nullopt, 0), Queued(-1, 0), true},
      {"equal priority and timestamp is not less", Queued(5, 3), Queued(5, 3), false},
  };
  testing::FakeHandle handle;
  auto plugin = PrioritySortRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* sort = dynamic_cast<QueueSortPlugin*>(plugin->get());
  ASSERT_NE(sort, nullptr);
  EXPECT_EQ(sort->Name(), "PrioritySort");
  for (const Case& tc : cases) {
    EXPECT_EQ(sort->Less(tc.a, tc.b), tc.want) << tc.name;
  }
}

}  // namespace
}  // namespace berth
