#include "berth/api/compact_vector.h"

#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>
#include <vector>

namespace berth {
namespace {

using Strings = CompactVector<std::string>;

std::vector<std::string> Copy(const Strings& v) { return {v.begin(), v.end()}; }

// Long enough to live on the heap, so a lost move or a double destroy shows under ASan.
std::string Long(int i) { return "value-that-does-not-fit-in-place-" + std::to_string(i); }

TEST(CompactVectorTest, IsOnePointerAndAllocatesNothingWhenEmpty) {
  static_assert(sizeof(Strings) == sizeof(void*));
  Strings v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(v.begin(), v.end());
  EXPECT_EQ(v.data(), nullptr);
}

TEST(CompactVectorTest, BehavesAsStdVectorUnderRandomEdits) {
  std::mt19937 rng(7);
  Strings v;
  std::vector<std::string> ref;
  for (int step = 0; step < 5000; ++step) {
    const size_t pos = ref.empty() ? 0 : rng() % (ref.size() + 1);
    switch (rng() % 9) {
      case 0:
      case 1:
        v.push_back(Long(step));
        ref.push_back(Long(step));
        break;
      case 2:
        v.insert(v.begin() + pos, Long(step));
        ref.insert(ref.begin() + pos, Long(step));
        break;
      case 3:
        if (!ref.empty()) {
          const size_t at = rng() % ref.size();
          v.erase(v.begin() + at);
          ref.erase(ref.begin() + at);
        }
        break;
      case 4:
        if (!ref.empty()) {
          const size_t a = rng() % ref.size(), b = a + rng() % (ref.size() - a + 1);
          v.erase(v.begin() + a, v.begin() + b);
          ref.erase(ref.begin() + a, ref.begin() + b);
        }
        break;
      case 5: {
        const size_t n = rng() % 12;
        v.resize(n, Long(-step));
        ref.resize(n, Long(-step));
        break;
      }
      case 6:
        if (!ref.empty()) {
          v.pop_back();
          ref.pop_back();
        }
        break;
      case 7: {
        const std::vector<std::string> more = {Long(step), Long(step + 1)};
        v.insert(v.begin() + pos, more.begin(), more.end());
        ref.insert(ref.begin() + pos, more.begin(), more.end());
        break;
      }
      case 8:
        if (rng() % 10 == 0) {
          v.clear();
          ref.clear();
          v.shrink_to_fit();
        }
        break;
    }
    ASSERT_EQ(Copy(v), ref) << "after step " << step;
    ASSERT_EQ(v, ref);
  }
}

TEST(CompactVectorTest, AppendingAnElementOfItselfWhileGrowingKeepsTheValue) {
  Strings v = {Long(1)};
  for (int i = 0; i < 20; ++i) v.push_back(v.front());
  for (const auto& s : v) EXPECT_EQ(s, Long(1));
  v.insert(v.begin(), v.back());
  EXPECT_EQ(v.size(), 22u);
  EXPECT_EQ(v.front(), Long(1));
}

TEST(CompactVectorTest, CopiesDeeplyAndMovesByPointer) {
  Strings a = {Long(1), Long(2)};
  Strings b = a;
  b[0] = "changed";
  EXPECT_EQ(a[0], Long(1));
  const std::string* data = a.data();
  Strings c = std::move(a);
  EXPECT_EQ(c.data(), data);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  a = c;
  EXPECT_EQ(a, c);
  EXPECT_NE(a.data(), c.data());
}

TEST(CompactVectorTest, ConvertsFromStdVectorAndToSpan) {
  std::vector<std::string> source = {Long(1), Long(2), Long(3)};
  Strings v = source;
  EXPECT_EQ(v, source);
  Strings moved = std::move(source);
  EXPECT_EQ(moved, v);
  std::span<const std::string> view = v;
  EXPECT_EQ(view.size(), 3u);
  EXPECT_EQ(view[2], Long(3));
}

TEST(CompactVectorTest, OrdersLexicographicallyAsStdVector) {
  CompactVector<int> a = {1, 2, 3}, b = {1, 2, 4}, c = {1, 2};
  EXPECT_LT(a, b);
  EXPECT_LT(c, a);
  EXPECT_EQ(a <=> CompactVector<int>({1, 2, 3}), std::strong_ordering::equal);
}

TEST(CompactVectorTest, ReserveKeepsElementsAndAtChecksBounds) {
  Strings v = {Long(1)};
  v.reserve(100);
  EXPECT_GE(v.capacity(), 100u);
  EXPECT_EQ(v.at(0), Long(1));
  EXPECT_THROW((void)v.at(1), std::out_of_range);
  v.shrink_to_fit();
  EXPECT_GE(v.capacity(), 1u);
  EXPECT_LT(v.capacity(), 100u);
  EXPECT_EQ(v.at(0), Long(1));
}

TEST(CompactVectorTest, SixtyFiveThousandElementsAndMoreKeepTheirSizeInAHeader) {
  CompactVector<uint32_t> v;
  std::vector<uint32_t> ref;
  for (uint32_t i = 0; i < 70000; ++i) {
    v.push_back(i);
    ref.push_back(i);
  }
  EXPECT_EQ(v.size(), 70000u);
  EXPECT_GE(v.capacity(), 70000u);
  EXPECT_EQ(v, ref);
  v.erase(v.begin() + 10, v.end() - 10);  // back under the small layout's limit
  ref.erase(ref.begin() + 10, ref.end() - 10);
  EXPECT_EQ(v, ref);
  v.shrink_to_fit();
  EXPECT_EQ(v, ref);
  for (uint32_t i = 0; i < 70000; ++i) v.push_back(i);
  EXPECT_EQ(v.size(), 70020u);
  EXPECT_EQ(v.back(), 69999u);
  CompactVector<uint32_t> copy = v;
  EXPECT_EQ(copy, v);
}

TEST(CompactVectorTest, CapacityIsWhatTheAllocatorGaveSoAppendsFillItFirst) {
  Strings v;
  v.reserve(3);
  const std::string* block = v.data();
  const size_t cap = v.capacity();
  EXPECT_GE(cap, 3u);
  for (size_t i = 0; i < cap; ++i) v.push_back(Long(static_cast<int>(i)));
  EXPECT_EQ(v.data(), block);  // no reallocation until the block is full
  v.push_back("one more");
  EXPECT_GT(v.capacity(), cap);
}

}  // namespace
}  // namespace berth
