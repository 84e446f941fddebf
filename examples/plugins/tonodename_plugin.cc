// ToNodeName: a Score plugin that prefers one node — 80 for the node named in its args
// (default piworknode001), 20 for the others — normalized min–max onto 0..100, logging each
// node's normalized score. Built as a shared library and loaded with
// `--plugin-library libtonodename.so`, or compiled into a binary with the registration below.
// Registered as `ToNodeName` and under the scheduling-framework tutorial's name,
// `tonodename-scoring-plugin`, so the tutorial's KubeSchedulerConfiguration runs unchanged.
//
//   pluginConfig:
//   - name: ToNodeName
//     args: {nodeName: piworknode001}
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>
#include <berth/framework/typed_args.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace {

struct ToNodeNameArgs {
  std::string node_name = "piworknode001";
};

class ToNodeName final : public berth::ScorePlugin {
 public:
  ToNodeName(std::string name, std::string node) : name_(std::move(name)), node_(std::move(node)) {}
  std::string_view Name() const override { return name_; }

  berth::Status Score(const berth::CycleState&, const berth::PodInfo&, const berth::NodeInfo& node,
                      int64_t* score) const override {
    *score = node.name() == node_ ? 80 : 20;
    return berth::Status::Success();
  }

  bool HasNormalize() const override { return true; }
  berth::Status NormalizeScore(const berth::CycleState&, const berth::PodInfo& pod,
                               std::span<berth::NodeScore> scores) const override {
    if (scores.empty()) return berth::Status::Success();
    auto [lo, hi] = std::minmax_element(scores.begin(), scores.end(),
                                        [](auto& a, auto& b) { return a.score < b.score; });
    const int64_t min = lo->score, max = hi->score;
    for (berth::NodeScore& s : scores) {
      s.score =
          max == min ? berth::kMaxNodeScore : (s.score - min) * berth::kMaxNodeScore / (max - min);
      std::fprintf(stderr, "节点: %s, Score: %lld Pod: %s\n", s.node->name().c_str(),
                   static_cast<long long>(s.score), pod->Key().c_str());
    }
    return berth::Status::Success();
  }

 private:
  std::string name_;  // the name the profile enabled it under
  std::string node_;
};

}  // namespace

// Also compiled into examples/custom-scheduler (berth::Main with this registration).
berth::PluginRegistration ToNodeNameRegistration(std::string name) {
  berth::PluginRegistration reg;
  reg.name = name;
  reg.decode_args = berth::TypedArgs<ToNodeNameArgs>("ToNodeNameArgs")
                        .Field("nodeName", &ToNodeNameArgs::node_name)
                        .Validate([](const ToNodeNameArgs& a) -> berth::VoidResult {
                          if (a.node_name.empty()) return berth::Error{"nodeName: required value"};
                          return {};
                        })
                        .Decoder();
  reg.factory = [name](const berth::PluginArgs* args,
                       berth::Handle&) -> berth::Result<std::unique_ptr<berth::Plugin>> {
    return std::unique_ptr<berth::Plugin>(
        std::make_unique<ToNodeName>(name, berth::ArgsOf<ToNodeNameArgs>(args).node_name));
  };
  return reg;
}

berth::PluginRegistration ToNodeNameRegistration() { return ToNodeNameRegistration("ToNodeName"); }

#ifndef BERTH_COMPILED_IN
BERTH_PLUGIN_LIBRARY(registry) {
  (void)registry.Add(ToNodeNameRegistration());
  (void)registry.Add(ToNodeNameRegistration("tonodename-scoring-plugin"));
}
#endif
