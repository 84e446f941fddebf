#include "api/resource_amount.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(ResourceAmountTest, CpuMemoryStorageAndCounts) {
  EXPECT_EQ(FormatAmount("cpu", 16650), "16650m");
  EXPECT_EQ(FormatAmount("cpu", 4000), "4");
  EXPECT_EQ(FormatAmount("memory", 24 * 1024 * 1024), "24Mi");
  EXPECT_EQ(FormatAmount("memory", 24 * 1024 * 1024 + 1), "25Mi");  // rounded up
  EXPECT_EQ(FormatAmount("storage", 1), "1Mi");
  EXPECT_EQ(FormatAmount("ephemeral-storage", 0), "0Mi");
  EXPECT_EQ(FormatAmount("nvidia.com/gpu", 2), "2");
}

}  // namespace
}  // namespace berth
