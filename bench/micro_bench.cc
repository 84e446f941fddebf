// Micro-benchmarks (Google Benchmark) of hot helpers: quantity parsing, selector matching,
// pod request accounting, manifest decoding and the extender wire format (500 nodes per call, as
// in SchedulingBasic at 5000 nodes). Run: build/berth_micro_bench
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>

#include "api/codec.h"
#include "api/json_parse.h"
#include "api/json_text.h"
#include "berth/api/quantity.h"
#include "berth/api/resources.h"
#include "berth/api/selectors.h"
#include "berth/extender/v1.h"
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

std::vector<std::string> NodeNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("node-" + std::to_string(i * 7));
  return names;
}

std::string ExtenderArgsText(int n) {
  extender::v1::ExtenderArgs args;
  args.pod = testing::MakePod().Name("m-1").Req({{"cpu", "100m"}, {"memory", "500Mi"}}).Obj();
  args.node_names = NodeNames(n);
  return extender::v1::Encode(args);
}

void BM_ExtenderDecodeArgs(benchmark::State& state) {
  const std::string text = ExtenderArgsText(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(extender::v1::DecodeExtenderArgs(text));
}
BENCHMARK(BM_ExtenderDecodeArgs)->Arg(0)->Arg(500);

void BM_ExtenderEncodeFilterResult(benchmark::State& state) {
  extender::v1::ExtenderFilterResult r;
  r.node_names = NodeNames(500);
  for (auto _ : state) benchmark::DoNotOptimize(extender::v1::Encode(r));
}
BENCHMARK(BM_ExtenderEncodeFilterResult);

void BM_ExtenderEncodeHostPriorities(benchmark::State& state) {
  extender::v1::HostPriorityList list;
  for (auto& name : NodeNames(500)) list.push_back({name, 3});
  for (auto _ : state) benchmark::DoNotOptimize(extender::v1::Encode(list));
}
BENCHMARK(BM_ExtenderEncodeHostPriorities);

void BM_ExtenderDecodeHostPriorities(benchmark::State& state) {
  extender::v1::HostPriorityList list;
  for (auto& name : NodeNames(500)) list.push_back({name, 3});
  const std::string text = extender::v1::Encode(list);
  for (auto _ : state) benchmark::DoNotOptimize(extender::v1::DecodeHostPriorityList(text));
}
BENCHMARK(BM_ExtenderDecodeHostPriorities);

void BM_ExtenderDecodeFilterResult(benchmark::State& state) {
  extender::v1::ExtenderFilterResult r;
  r.node_names = NodeNames(500);
  const std::string text = extender::v1::Encode(r);
  for (auto _ : state) benchmark::DoNotOptimize(extender::v1::DecodeExtenderFilterResult(text));
}
BENCHMARK(BM_ExtenderDecodeFilterResult);

// A watch event as the API server sends it for a freshly created pod (1.7 KB, managedFields
// included): what an informer reads and the store writes for every pod.
const std::string& PodWatchLine() {
  static const std::string line =
      R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":)"
      R"("2026-11-27T12:00:00Z","managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"pause\"}":{".":{},"f:image":{},)"
      R"("f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},)"
      R"("f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},)"
      R"("f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},)"
      R"("f:securityContext":{},"f:terminationGracePeriodSeconds":{}}},"manager":"kubectl-create",)"
      R"("operation":"Update","time":"2026-11-27T12:00:00Z"}],"name":"new-00042","namespace":)"
      R"("default","resourceVersion":"60042","uid":"0b6f0a3c-4f1e-4c57-9d7e-2a1b3c4d5e6f"},)"
      R"("spec":{"containers":[{"image":"registry.k8s.io/pause:3.9","imagePullPolicy":)"
      R"("IfNotPresent","name":"pause","resources":{"requests":{"cpu":"100m","memory":"500Mi"}},)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],)"
      R"("dnsPolicy":"ClusterFirst","enableServiceLinks":true,"preemptionPolicy":)"
      R"("PreemptLowerPriority","priority":0,"restartPolicy":"Always","schedulerName":)"
      R"("default-scheduler","securityContext":{},"serviceAccount":"default",)"
      R"("serviceAccountName":"default","terminationGracePeriodSeconds":30,"tolerations":[)"
      R"({"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists",)"
      R"("tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable",)"
      R"("operator":"Exists","tolerationSeconds":300}]},"status":{"phase":"Pending",)"
      R"("qosClass":"Burstable"}}})";
  return line;
}

void BM_JsonParseNlohmann(benchmark::State& state) {
  for (auto _ : state) {
    auto doc = nlohmann::json::parse(PodWatchLine(), nullptr, false);
    benchmark::DoNotOptimize(doc);
  }
}
BENCHMARK(BM_JsonParseNlohmann);

void BM_JsonParseFast(benchmark::State& state) {
  for (auto _ : state) {
    nlohmann::json doc;
    if (!ParseJsonFast(PodWatchLine(), &doc)) state.SkipWithError("not parsed");
    benchmark::DoNotOptimize(doc);
  }
}
BENCHMARK(BM_JsonParseFast);

// As an informer reads it: metadata.managedFields left out.
void BM_JsonParseFastWithoutManagedFields(benchmark::State& state) {
  for (auto _ : state) {
    nlohmann::json doc;
    if (!ParseJsonFastWithoutManagedFields(PodWatchLine(), &doc)) {
      state.SkipWithError("not parsed");
    }
    benchmark::DoNotOptimize(doc);
  }
}
BENCHMARK(BM_JsonParseFastWithoutManagedFields);

void BM_JsonDumpNlohmann(benchmark::State& state) {
  const auto doc = nlohmann::json::parse(PodWatchLine());
  for (auto _ : state) benchmark::DoNotOptimize(doc.dump());
}
BENCHMARK(BM_JsonDumpNlohmann);

void BM_JsonAppend(benchmark::State& state) {
  const auto doc = nlohmann::json::parse(PodWatchLine());
  for (auto _ : state) {
    std::string text;
    text.reserve(1024);
    AppendJson(doc, &text);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_JsonAppend);

}  // namespace
}  // namespace berth

BENCHMARK_MAIN();
