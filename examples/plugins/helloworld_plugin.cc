// HelloWorldPlugin: a Score plugin with typed args {xxx: string, yyy: string, zzz: int}, meant
// to run alone (every default score plugin disabled with `disabled: [{name: "*"}]`). It scores
// a node by how many characters of its name appear in args.xxx, plus zzz, capped at 100.
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>
#include <berth/framework/typed_args.h>

#include <algorithm>
#include <string>

namespace {

struct HelloWorldArgs {
  std::string xxx, yyy;
  int64_t zzz = 0;
};

class HelloWorld final : public berth::ScorePlugin {
 public:
  explicit HelloWorld(HelloWorldArgs args) : args_(std::move(args)) {}
  std::string_view Name() const override { return "HelloWorldPlugin"; }
  berth::Status Score(const berth::CycleState&, const berth::PodInfo&, const berth::NodeInfo& node,
                      int64_t* score) const override {
    int64_t s = args_.zzz;
    for (char c : node.name()) s += args_.xxx.find(c) != std::string::npos;
    *score = std::clamp<int64_t>(s, 0, berth::kMaxNodeScore);
    return berth::Status::Success();
  }

 private:
  HelloWorldArgs args_;
};

}  // namespace

BERTH_PLUGIN_LIBRARY(registry) {
  berth::PluginRegistration reg;
  reg.name = "HelloWorldPlugin";
  // Typed args: every field checked, unknown fields rejected, errors naming the YAML path.
  reg.decode_args = berth::TypedArgs<HelloWorldArgs>("HelloWorldPluginArgs")
                        .Field("xxx", &HelloWorldArgs::xxx)
                        .Field("yyy", &HelloWorldArgs::yyy)
                        .Field("zzz", &HelloWorldArgs::zzz)
                        .Decoder();
  reg.factory = [](const berth::PluginArgs* args,
                   berth::Handle&) -> berth::Result<std::unique_ptr<berth::Plugin>> {
    return std::unique_ptr<berth::Plugin>(
        std::make_unique<HelloWorld>(berth::ArgsOf<HelloWorldArgs>(args)));
  };
  (void)registry.Add(std::move(reg));
}
