// Allocations per second of the DRA structured allocator (Google Benchmark).
// Run: build/berth_dra_bench
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "cel/dra.h"
#include "dra/allocator.h"

namespace berth::dra {
namespace {

Quantity Q(const char* s) { return Quantity::Parse(s).value(); }

// A node with eight GPUs of one driver, as a DRA driver publishes them: one slice, one pool.
std::shared_ptr<const ResourceSlice> EightGpus(const std::string& node) {
  auto s = std::make_shared<ResourceSlice>();
  s->metadata.name = node + "-gpu.example.com";
  s->spec.driver = "gpu.example.com";
  s->spec.pool = ResourcePool{node, 1, 1};
  s->spec.node_name = node;
  for (int i = 0; i < 8; ++i) {
    Device d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["model"].string_value = "a100-sxm4-80gb";
    d.attributes["index"].int_value = i;
    d.attributes["driverVersion"].version_value = "550.54.15";
    d.capacity["memory"].value = Q("80Gi");
    s->spec.devices.push_back(std::move(d));
  }
  return s;
}

// One claim for one GPU of at least 40Gi on a node whose first `used` GPUs are taken.
void BM_AllocateOneGpu(benchmark::State& state) {
  const int used = static_cast<int>(state.range(0));
  cel::dra::SelectorCache cache(64);
  auto cls = std::make_shared<DeviceClass>();
  cls->metadata.name = "gpu.example.com";
  cls->spec.selectors.push_back({"device.driver == \"gpu.example.com\""});
  AllocatedState allocated;
  for (int i = 0; i < used; ++i)
    allocated.allocated.insert({"gpu.example.com", "node-1", "gpu-" + std::to_string(i)});
  Allocator allocator(
      Features{}, allocated,
      [&](std::string_view) -> std::shared_ptr<const DeviceClass> { return cls; },
      {EightGpus("node-1")}, &cache);
  auto claim = std::make_shared<ResourceClaim>();
  claim->metadata.name = "gpu";
  DeviceRequest& r = claim->spec.devices.requests.emplace_back();
  r.name = "gpu";
  r.exactly.emplace();
  r.exactly->device_class_name = "gpu.example.com";
  r.exactly->selectors.push_back(
      {"device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"});
  const std::vector<std::shared_ptr<const ResourceClaim>> claims = {claim};
  Node node;
  node.metadata.name = "node-1";
  for (auto _ : state) {
    auto result = allocator.Allocate(node, claims);
    if (!result.ok() || !*result) {
      state.SkipWithError("no allocation");
      return;
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AllocateOneGpu)->Arg(0)->Arg(7);

}  // namespace
}  // namespace berth::dra

BENCHMARK_MAIN();
