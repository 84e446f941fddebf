// Status is shared by its copies: changing one copy must never show through another.
#include "berth/framework/status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth {
namespace {

TEST(StatusTest, CopiesShareTheirReasonsAndPluginName) {
  const Status built = Status::Unschedulable("node(s) didn't match").WithPlugin("Spread");
  Status copy = built;
  EXPECT_EQ(&copy.reasons(), &built.reasons());
  // Stamping the name it already carries (the framework does, after every rejection) keeps the
  // shared block.
  copy.WithPlugin("Spread");
  EXPECT_EQ(&copy.reasons(), &built.reasons());
  EXPECT_EQ(copy.plugin(), "Spread");
  EXPECT_EQ(copy, built);
}

TEST(StatusTest, ChangingACopyLeavesTheOthersAlone) {
  const Status built = Status::Unschedulable("too many pods").WithPlugin("Fit");
  Status renamed = built;
  renamed.WithPlugin("Other");
  Status appended = built;
  appended.AppendReason("and more");
  EXPECT_EQ(built.plugin(), "Fit");
  EXPECT_EQ(built.reasons(), std::vector<std::string>{"too many pods"});
  EXPECT_EQ(renamed.plugin(), "Other");
  EXPECT_EQ(renamed.reasons(), built.reasons());
  EXPECT_EQ(appended.plugin(), "Fit");
  EXPECT_EQ(appended.Message(), "too many pods, and more");
  EXPECT_NE(appended, built);
  // The plugin name does not take part in equality (two plugins rejecting alike are equal).
  EXPECT_EQ(renamed, built);
}

TEST(StatusTest, StatusesWithoutReasons) {
  Status ok;
  EXPECT_TRUE(ok.IsSuccess());
  EXPECT_TRUE(ok.reasons().empty());
  EXPECT_EQ(ok.plugin(), "");
  EXPECT_EQ(ok.Message(), "");
  EXPECT_TRUE(Status::Skip().IsSkip());
  EXPECT_TRUE(Status::Skip().reasons().empty());
  EXPECT_TRUE(Status::Wait().IsWait());
  EXPECT_EQ(Status(Code::kUnschedulable, std::vector<std::string>{}).reasons().size(), 0u);
  Status named = Status::Skip();
  named.WithPlugin("Binder");
  EXPECT_EQ(named.plugin(), "Binder");
  EXPECT_TRUE(named.IsSkip());
  Status moved = std::move(named);
  EXPECT_EQ(moved.plugin(), "Binder");
  EXPECT_EQ(Status(Code::kError, std::vector<std::string>{"a", "b"}).Message(), "a, b");
}

}  // namespace
}  // namespace berth
