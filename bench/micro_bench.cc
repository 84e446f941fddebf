// Micro-benchmarks (Google Benchmark) of hot helpers: quantity parsing, selector matching,
// pod request accounting and manifest decoding. Run: build/berth_micro_bench
#include <benchmark/benchmark.h>

#include <string>

#include "api/codec.h"
#include "berth/api/quantity.h"
#include "berth/api/resources.h"
#include "berth/api/selectors.h"
#include "testing/builders.h"

namespace berth {
namespace {

void BM_QuantityParse(benchmark::State& state) {
  const char* inputs[] = {"100m", "1.5Gi", "500Mi", "4", "2e3", "0.25"};
  size_t i = 0;
  for (auto _ : state) {
    auto q = Quantity::Parse(inputs[i++ % 6]);
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_QuantityParse);

void BM_SelectorMatch(benchmark::State& state) {
  LabelSelector s;
  s.match_labels = {{"app", "web"}};
  s.match_expressions = {{"tier", "In", {"frontend", "backend"}}};
  CompiledSelector sel = CompiledSelector::Compile(s).value();
  Labels labels = {{"app", "web"}, {"tier", "backend"}, {"version", "v2"}};
  for (auto _ : state) benchmark::DoNotOptimize(sel.Matches(labels));
}
BENCHMARK(BM_SelectorMatch);

void BM_PodRequests(benchmark::State& state) {
  auto pod = testing::MakePod()
                 .Name("p")
                 .Req({{"cpu", "100m"}, {"memory", "500Mi"}})
                 .Req({{"cpu", "250m"}})
                 .InitReq({{"cpu", "1"}})
                 .Obj();
  for (auto _ : state) benchmark::DoNotOptimize(ComputePodRequests(*pod));
}
BENCHMARK(BM_PodRequests);

void BM_DecodePodYaml(benchmark::State& state) {
  const std::string yaml = R"(apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 100m, memory: 500Mi}
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
)";
  for (auto _ : state) {
    auto objs = DecodeObjects(yaml, "bench.yaml");
    benchmark::DoNotOptimize(objs);
  }
}
BENCHMARK(BM_DecodePodYaml);

}  // namespace
}  // namespace berth

BENCHMARK_MAIN();
