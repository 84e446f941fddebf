// berth_protobuf_bench: the cost of decoding protobuf request bodies into the JSON the API
// server stores (DecodeProtobufObject), for what kube-scheduler sends per pod (a Binding and an
// events.k8s.io Event) and for a pod with a whole spec (volumes, probes, affinity, tolerations).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "apiserver/protobuf.h"
#include "apiserver/protobuf_writer.h"

namespace {

using namespace berth::apiserver::protobuf_writer;  // NOLINT(build/namespaces)

std::string BindingBody() {
  return Envelope("v1", "Binding",
                  Msg(1, Str(1, "web-7d9f8c-abcde") + Str(3, "default") + Str(5, "uid-1")) +
                      Msg(2, Str(1, "Node") + Str(3, "node-00042")));
}

std::string EventBody() {
  return Envelope(
      "events.k8s.io/v1", "Event",
      Msg(1, Str(1, "web-7d9f8c-abcde.17a") + Str(3, "default")) +
          Msg(2, Int(1, 1700000000) + Int(2, 123456000)) + Str(4, "default-scheduler") +
          Str(5, "default-scheduler-host") + Str(6, "Binding") + Str(7, "Scheduled") +
          Msg(8, Str(1, "Pod") + Str(2, "default") + Str(3, "web-7d9f8c-abcde") + Str(5, "v1")) +
          Str(10, "Successfully assigned default/web-7d9f8c-abcde to node-00042") +
          Str(11, "Normal"));
}

std::string PodBody() {
  const std::string container =
      Str(1, "web") + Str(2, "nginx") + Msg(6, Int(3, 80) + Str(4, "TCP")) +
      Msg(8, Msg(2, Str(1, "cpu") + Msg(2, Str(1, "100m"))) +
                 Msg(2, Str(1, "memory") + Msg(2, Str(1, "64Mi")))) +
      Msg(9, Str(1, "cache") + Str(3, "/cache")) +
      Msg(10, Msg(1, Msg(2, Str(1, "/healthz") + Msg(2, Int(1, 1) + Str(3, "http")))) + Int(2, 5) +
                  Int(4, 10));
  const std::string spec =
      Msg(1, Str(1, "cache") + Msg(2, Msg(2, Msg(2, Str(1, "1Gi"))))) + Msg(2, container) +
      Str(3, "Always") +
      Msg(18, Msg(1, Msg(1, Msg(1, Msg(1, Str(1, "zone") + Str(2, "In") + Str(3, "a")))))) +
      Msg(22, Str(1, "dedicated") + Str(2, "Equal") + Str(3, "web") + Str(4, "NoSchedule")) +
      Msg(33,
          Int(1, 1) + Str(2, "zone") + Str(3, "DoNotSchedule") + Msg(4, Entry(1, "app", "web")));
  return Envelope(
      "v1", "Pod",
      Msg(1, Str(1, "web") + Str(3, "default") + Entry(11, "app", "web")) + Msg(2, spec));
}

void Decode(benchmark::State& state, const std::string& body) {
  for (auto _ : state) {
    auto obj = berth::apiserver::DecodeProtobufObject(body);
    if (!obj.ok()) state.SkipWithError(obj.error().message.c_str());
    benchmark::DoNotOptimize(obj);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}

void BM_ProtobufBinding(benchmark::State& state) { Decode(state, BindingBody()); }
void BM_ProtobufEvent(benchmark::State& state) { Decode(state, EventBody()); }
void BM_ProtobufPod(benchmark::State& state) { Decode(state, PodBody()); }
BENCHMARK(BM_ProtobufBinding);
BENCHMARK(BM_ProtobufEvent);
BENCHMARK(BM_ProtobufPod);

}  // namespace

BENCHMARK_MAIN();
