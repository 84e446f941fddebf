// HelloWorldPlugin: a Score plugin with typed args {xxx: string, yyy: string, zzz: int}, meant
// to run alone (every default score plugin disabled with `disabled: [{name: "*"}]`). It scores
// a node by how many characters of its name appear in args.xxx, plus zzz, capped at 100.
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct HelloWorldArgs final : berth::PluginArgs {
  std::string xxx, yyy;
  int64_t zzz = 0;
  std::string_view Kind() const override { return "HelloWorldPluginArgs"; }
  void Encode(nlohmann::json& out) const override {
    out = {{"xxx", xxx}, {"yyy", yyy}, {"zzz", zzz}};
  }
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

// Typed args: every field checked, errors naming the YAML path.
berth::Result<std::shared_ptr<const berth::PluginArgs>> DecodeArgs(const nlohmann::json* raw,
                                                                   const std::string& path) {
  auto args = std::make_shared<HelloWorldArgs>();
  if (!raw || raw->is_null()) return std::shared_ptr<const berth::PluginArgs>(args);
  if (!raw->is_object()) return berth::Error{path + ": expected an object"};
  for (auto it = raw->begin(); it != raw->end(); ++it) {
    const std::string at = path + "." + it.key();
    if (it.key() == "xxx" || it.key() == "yyy") {
      if (!it->is_string()) return berth::Error{at + ": expected a string"};
      (it.key() == "xxx" ? args->xxx : args->yyy) = it->get<std::string>();
    } else if (it.key() == "zzz") {
      if (!it->is_number_integer()) return berth::Error{at + ": expected an integer"};
      args->zzz = it->get<int64_t>();
    } else {
      return berth::Error{at + ": unknown field"};
    }
  }
  return std::shared_ptr<const berth::PluginArgs>(args);
}

}  // namespace

BERTH_PLUGIN_LIBRARY(registry) {
  berth::PluginRegistration reg;
  reg.name = "HelloWorldPlugin";
  reg.decode_args = DecodeArgs;
  reg.factory = [](const berth::PluginArgs* args,
                   berth::Handle&) -> berth::Result<std::unique_ptr<berth::Plugin>> {
    const auto* typed = dynamic_cast<const HelloWorldArgs*>(args);
    return std::unique_ptr<berth::Plugin>(
        std::make_unique<HelloWorld>(typed ? *typed : HelloWorldArgs{}));
  };
  (void)registry.Add(std::move(reg));
}
