#include "api/error_detail.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::error_detail {
namespace {

struct Where {
  std::string name;
};
struct Flag {};

TEST(ErrorDetailTest, AttachedDetailsTravelWithCopiesOfTheError) {
  const Error e = Attach(Error{"detail test: one", ErrorCode::kConflict}, Where{"here"});
  const Error copy = e;  // as Result<T> copies and moves it
  ASSERT_NE(Find<Where>(copy), nullptr);
  EXPECT_EQ(Find<Where>(copy)->name, "here");
  EXPECT_EQ(Find<Flag>(copy), nullptr);  // one detail per type
  // Another code or another message is another error.
  EXPECT_EQ(Find<Where>(Error{"detail test: one", ErrorCode::kNotFound}), nullptr);
  EXPECT_EQ(Find<Where>(Error{"detail test: one!", ErrorCode::kConflict}), nullptr);
  // A later detail of the same type replaces the first; other types are kept.
  Attach(e, Where{"there"});
  Attach(e, Flag{});
  EXPECT_EQ(Find<Where>(e)->name, "there");
  EXPECT_NE(Find<Flag>(e), nullptr);
}

TEST(ErrorDetailTest, ARewordedErrorKeepsItsDetailsOnlyWhenCopied) {
  const Error e = Attach(Error{"detail test: two", ErrorCode::kForbidden}, Where{"ns"});
  const Error reworded{"detail test: two, reworded", ErrorCode::kForbidden};
  EXPECT_EQ(Find<Where>(reworded), nullptr);
  CopyDetails(e, reworded);
  ASSERT_NE(Find<Where>(reworded), nullptr);
  EXPECT_EQ(Find<Where>(reworded)->name, "ns");
}

}  // namespace
}  // namespace berth::error_detail
