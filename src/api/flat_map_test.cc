#include "berth/api/flat_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <string_view>

#include "berth/api/boxed.h"
#include "berth/api/objects.h"

namespace berth {
namespace {

using StrMap = FlatMap<std::string, std::string>;

std::vector<std::string> Keys(const StrMap& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

TEST(FlatMapTest, IteratesInKeyOrderWhateverTheInsertionOrder) {
  StrMap m;
  m["zone"] = "a";
  m["app"] = "web";
  m.emplace("kubernetes.io/hostname", "n1");
  m.insert({"tier", "front"});
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"app", "kubernetes.io/hostname", "tier", "zone"}));
  EXPECT_EQ(m.size(), 4u);
}

TEST(FlatMapTest, LooksUpByStringViewAndCString) {
  StrMap m{{"app", "web"}, {"zone", "a"}};
  std::string_view key = "zone";
  ASSERT_NE(m.find(key), m.end());
  EXPECT_EQ(m.find(key)->second, "a");
  EXPECT_TRUE(m.contains("app"));
  EXPECT_EQ(m.count("missing"), 0u);
  EXPECT_EQ(m.find("ap"), m.end());  // a prefix is not a key
  EXPECT_EQ(m.at("app"), "web");
  EXPECT_THROW((void)m.at("nope"), std::out_of_range);
}

TEST(FlatMapTest, InsertKeepsTheFirstValueAsStdMapDoes) {
  StrMap m{{"k", "first"}, {"k", "second"}};
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at("k"), "first");
  auto [it, inserted] = m.insert({"k", "third"});
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, "first");
  auto [it2, inserted2] = m.try_emplace("k", "fourth");
  EXPECT_FALSE(inserted2);
  EXPECT_EQ(it2->second, "first");
  m.insert_or_assign("k", "fifth");
  EXPECT_EQ(m.at("k"), "fifth");
}

TEST(FlatMapTest, ErasesByKeyAndIterator) {
  StrMap m{{"a", "1"}, {"b", "2"}, {"c", "3"}};
  EXPECT_EQ(m.erase("b"), 1u);
  EXPECT_EQ(m.erase("b"), 0u);
  auto next = m.erase(m.find("a"));
  ASSERT_NE(next, m.end());
  EXPECT_EQ(next->first, "c");
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"c"}));
}

TEST(FlatMapTest, AssignUnsortedSortsAndKeepsTheLastOfEqualKeys) {
  FlatMap<std::string, int> m{{"old", 9}};
  m.AssignUnsorted({{"b", 1}, {"a", 2}, {"b", 3}, {"c", 4}, {"a", 5}});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.at("a"), 5);
  EXPECT_EQ(m.at("b"), 3);
  EXPECT_EQ(m.at("c"), 4);
  EXPECT_FALSE(m.contains("old"));
}

TEST(FlatMapTest, ComparesByContents) {
  StrMap a{{"x", "1"}, {"y", "2"}};
  StrMap b{{"y", "2"}, {"x", "1"}};
  EXPECT_EQ(a, b);
  b["y"] = "3";
  EXPECT_NE(a, b);
  EXPECT_LT(a, b);
}

// The same random operations on a FlatMap and a std::map leave the same contents.
TEST(FlatMapTest, AgreesWithStdMapUnderRandomOperations) {
  std::mt19937 rng(7);
  StrMap flat;
  std::map<std::string, std::string, std::less<>> tree;
  for (int i = 0; i < 20000; ++i) {
    const std::string key = "k" + std::to_string(rng() % 64);
    const std::string value = std::to_string(rng() % 1000);
    switch (rng() % 4) {
      case 0:
        flat[key] = value;
        tree[key] = value;
        break;
      case 1:
        EXPECT_EQ(flat.insert({key, value}).second, tree.insert({key, value}).second);
        break;
      case 2:
        EXPECT_EQ(flat.erase(key), tree.erase(key));
        break;
      case 3:
        EXPECT_EQ(flat.contains(key), tree.contains(key));
        break;
    }
  }
  ASSERT_EQ(flat.size(), tree.size());
  auto it = tree.begin();
  for (const auto& [k, v] : flat) {
    EXPECT_EQ(k, it->first);
    EXPECT_EQ(v, it->second);
    ++it;
  }
}

TEST(BoxedTest, BehavesAsAnOptionalWithDeepCopies) {
  Boxed<Affinity> a;
  EXPECT_FALSE(a.has_value());
  EXPECT_FALSE(a);
  EXPECT_TRUE(a == std::nullopt);
  a.emplace().node_affinity.emplace().preferred.push_back({10, {}});
  ASSERT_TRUE(a);
  Boxed<Affinity> b = a;  // a deep copy: changing b leaves a alone
  b->node_affinity->preferred[0].weight = 20;
  EXPECT_EQ(a->node_affinity->preferred[0].weight, 10);
  EXPECT_EQ((*b).node_affinity->preferred[0].weight, 20);
  b = std::nullopt;
  EXPECT_FALSE(b);
  EXPECT_THROW((void)b.value(), std::bad_optional_access);
  b = Affinity{};
  EXPECT_TRUE(b.has_value());
  EXPECT_FALSE(b->node_affinity.has_value());
  Boxed<Affinity> moved = std::move(a);
  EXPECT_TRUE(moved);
  moved.reset();
  EXPECT_FALSE(moved);
}

TEST(BoxedTest, AnUnsetPodAffinityCostsOnePointer) {
  EXPECT_EQ(sizeof(Boxed<Affinity>), sizeof(void*));
  Pod pod;
  EXPECT_FALSE(pod.spec.affinity);
}

}  // namespace
}  // namespace berth
