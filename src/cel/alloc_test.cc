// Evaluating a compiled selector against a prepared device allocates nothing: the scheduler
// evaluates every selector against every candidate device. Counted with a replaced global
// operator new (this test binary only).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "cel/dra.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

// GCC's sanitizer builds flag free() of operator new's memory, not knowing both are replaced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace berth::cel::dra {
namespace {

TEST(DraSelectorAllocations, TypicalSelectorEvaluatesWithoutAllocating) {
  auto sel = Selector::Compile(R"(device.driver == "gpu.example.com" &&
      device.attributes["gpu.example.com"].model == "a100" &&
      device.attributes["gpu.example.com"].fw.isGreaterThan(semver("1.2.0")) &&
      device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi")))");
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  auto dev =
      PreparedDevice::Prepare({"gpu.example.com",
                               {{"model", std::string("a100")}, {"fw", VersionString{"1.4.0"}}},
                               {{"memory", Quantity::Parse("80Gi").value()}}});
  ASSERT_TRUE(dev.ok());
  ASSERT_TRUE(sel->Matches(*dev).value());
  long before = g_allocations.load();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(sel->Matches(*dev).value());
  EXPECT_EQ(g_allocations.load() - before, 0);
}

TEST(DraSelectorAllocations, CounterSeesAllocations) {
  // The counter works: a selector building a list allocates.
  auto sel = Selector::Compile(R"([device.driver].size() == 1)");
  ASSERT_TRUE(sel.ok());
  auto dev = PreparedDevice::Prepare({"gpu.example.com", {}, {}}).value();
  long before = g_allocations.load();
  ASSERT_TRUE(sel->Matches(dev).value());
  EXPECT_GT(g_allocations.load() - before, 0);
}

}  // namespace
}  // namespace berth::cel::dra
