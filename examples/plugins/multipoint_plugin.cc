// MultipointCommunicating: one plugin at two extension points talking through CycleState.
// Reserve writes a note for a pod named `my-test-pod`; PreBind finds it and rejects the pod as
// "pod is not permitted"; Unreserve removes the note. Other pods pass untouched. Registered as
// `MultipointCommunicating` and under the scheduling-framework tutorial's name,
// `multipoint-communicating-plugin`.
#include <berth/framework/cycle_state.h>
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>

#include <memory>
#include <string>

namespace {

struct Note final : berth::StateData {
  std::string pod;
  std::shared_ptr<berth::StateData> Clone() const override { return std::make_shared<Note>(*this); }
};
inline constexpr berth::StateKey<Note> kNoteKey{"MultipointCommunicating"};

class MultipointCommunicating final : public berth::ReservePlugin, public berth::PreBindPlugin {
 public:
  explicit MultipointCommunicating(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }

  berth::Status Reserve(berth::CycleState& state, const berth::PodInfo& pod,
                        const std::string&) override {
    if (pod->metadata.name == "my-test-pod") {
      auto note = std::make_shared<Note>();
      note->pod = pod->Key();
      state.Write(kNoteKey, std::move(note));
    }
    return berth::Status::Success();
  }

  void Unreserve(berth::CycleState& state, const berth::PodInfo&, const std::string&) override {
    state.Delete(kNoteKey);
  }

  berth::Status PreBind(berth::CycleState& state, const berth::PodInfo& pod,
                        const std::string&) override {
    const Note* note = state.Read(kNoteKey);
    if (note && note->pod == pod->Key())
      return berth::Status::Unschedulable("pod is not permitted");
    return berth::Status::Success();
  }

 private:
  std::string name_;  // the name the profile enabled it under
};

}  // namespace

BERTH_PLUGIN_LIBRARY(registry) {
  for (std::string name : {"MultipointCommunicating", "multipoint-communicating-plugin"}) {
    berth::PluginRegistration reg;
    reg.name = name;
    reg.factory = [name](const berth::PluginArgs*,
                         berth::Handle&) -> berth::Result<std::unique_ptr<berth::Plugin>> {
      return std::unique_ptr<berth::Plugin>(std::make_unique<MultipointCommunicating>(name));
    };
    (void)registry.Add(std::move(reg));
  }
}
