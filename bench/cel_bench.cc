// Evaluations per second of DRA CEL selectors (Google Benchmark). Run: build/berth_cel_bench
#include <benchmark/benchmark.h>

#include "cel/dra.h"

namespace berth::cel::dra {
namespace {

Device Gpu() {
  Device d;
  d.driver = "gpu.example.com";
  d.attributes = {{"model", std::string("a100-sxm4-80gb")},
                  {"index", int64_t{3}},
                  {"driverVersion", VersionString{"550.54.15"}},
                  {"uuid", std::string("GPU-8c1d2a4e-93b1-4b8f-a6c9-5d2e0f7b1c33")},
                  {"productName", std::string("NVIDIA A100-SXM4-80GB")},
                  {"cudaComputeCapability", VersionString{"8.0.0"}},
                  {"mig.example.com/capable", true}};
  d.capacity = {{"memory", Quantity::Parse("80Gi").value()},
                {"multiprocessors", Quantity::Parse("108").value()}};
  return d;
}

void Run(benchmark::State& state, const char* expression) {
  auto sel = Selector::Compile(expression);
  if (!sel.ok()) {
    state.SkipWithError(sel.error().message.c_str());
    return;
  }
  auto dev = PreparedDevice::Prepare(Gpu()).value();
  for (auto _ : state) {
    auto m = sel->Matches(dev);
    benchmark::DoNotOptimize(m);
  }
  state.SetItemsProcessed(state.iterations());
}

// A DeviceClass selector: the driver only.
void BM_SelectorDriver(benchmark::State& state) {
  Run(state, R"(device.driver == "gpu.example.com")");
}
BENCHMARK(BM_SelectorDriver);

// A typical request selector: driver, a string attribute and a capacity comparison.
void BM_SelectorTypical(benchmark::State& state) {
  Run(state, R"(device.driver == "gpu.example.com" &&
      device.attributes["gpu.example.com"].model == "a100-sxm4-80gb" &&
      device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi")))");
}
BENCHMARK(BM_SelectorTypical);

// Version comparison and a string function.
void BM_SelectorSemverAndString(benchmark::State& state) {
  Run(state,
      R"(device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("535.0.0")) &&
      device.attributes["gpu.example.com"].productName.startsWith("NVIDIA A100"))");
}
BENCHMARK(BM_SelectorSemverAndString);

// A macro over the attribute map.
void BM_SelectorMacro(benchmark::State& state) {
  Run(state, R"(device.attributes["gpu.example.com"].exists(k, k == "uuid"))");
}
BENCHMARK(BM_SelectorMacro);

// Compiling once per selector (DeviceClass and claim updates).
void BM_SelectorCompile(benchmark::State& state) {
  for (auto _ : state) {
    auto sel = Selector::Compile(R"(device.driver == "gpu.example.com" &&
        device.attributes["gpu.example.com"].model == "a100-sxm4-80gb" &&
        device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi")))");
    benchmark::DoNotOptimize(sel);
  }
}
BENCHMARK(BM_SelectorCompile);

// Preparing a device (once per device and ResourceSlice version).
void BM_PrepareDevice(benchmark::State& state) {
  Device d = Gpu();
  for (auto _ : state) {
    auto dev = PreparedDevice::Prepare(d);
    benchmark::DoNotOptimize(dev);
  }
}
BENCHMARK(BM_PrepareDevice);

}  // namespace
}  // namespace berth::cel::dra

BENCHMARK_MAIN();
