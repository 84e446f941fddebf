#include "plugins/nodeports/nodeports.h"

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "framework/pod_signature.h"

namespace berth {
namespace {

constexpr std::string_view kReason = "node(s) didn't have free ports for the requested pod ports";

struct WantedPort {
  std::string ip;
  std::string protocol;
  int32_t port = 0;
};

struct PortsPreFilterState final : StateData, std::enable_shared_from_this<PortsPreFilterState> {
  std::vector<WantedPort> ports;

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<PortsPreFilterState>(shared_from_this());
  }
};

inline constexpr StateKey<PortsPreFilterState> kPreFilterKey{"PreFilterNodePorts"};

void CollectHostPorts(const Container& c, std::vector<WantedPort>& out) {
  for (const ContainerPort& p : c.ports) {
    if (p.host_port <= 0) continue;
    out.push_back({p.host_ip.empty() ? "0.0.0.0" : p.host_ip,
                   p.protocol.empty() ? "TCP" : p.protocol, p.host_port});
  }
}

std::vector<WantedPort> HostPortsOf(const Pod& pod) {
  std::vector<WantedPort> ports;
  for (const Container& c : pod.spec.init_containers) {
    if (c.restart_policy && *c.restart_policy == "Always") CollectHostPorts(c, ports);
  }
  for (const Container& c : pod.spec.containers) CollectHostPorts(c, ports);
  return ports;
}

bool Conflict(const WantedPort& a, const WantedPort& b) {
  return a.port == b.port && a.protocol == b.protocol &&
         (a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0");
}

class NodePorts final : public PreFilterPlugin,
                        public FilterPlugin,
                        public EnqueueExtensions,
                        public PodSigner {
 public:
  std::string_view Name() const override { return kNodePortsName; }

  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameHostPorts(a, b);
  }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    auto s = std::make_shared<PortsPreFilterState>();
    s->ports = HostPortsOf(*pod);
    if (s->ports.empty()) return Status::Skip();
    state.Write(kPreFilterKey, std::move(s));
    return Status::Success();
  }

  Status Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const override {
    const PortsPreFilterState* s = state.Read(kPreFilterKey);
    if (s == nullptr) {
      return Status::Error("error reading \"PreFilterNodePorts\" from cycleState: not found");
    }
    for (const WantedPort& p : s->ports) {
      if (node.used_ports().CheckConflict(p.ip, p.protocol, p.port)) {
        return ports_taken_;
      }
    }
    return Status::Success();
  }

  // A port frees up when an assigned pod holding it goes; a new node has all ports free.
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kPod, kDelete},
             [](const Pod& pod, const EventObject& old_object,
                const EventObject&) -> Result<QueueingHint> {
               const Pod* deleted = ObjectAs<Pod>(old_object);
               if (!deleted) return Error{"pod deletion without the pod"};
               if (deleted->spec.node_name.empty()) return QueueingHint::kQueueSkip;
               const std::vector<WantedPort> wanted = HostPortsOf(pod);
               for (const WantedPort& freed : HostPortsOf(*deleted)) {
                 for (const WantedPort& w : wanted) {
                   if (Conflict(freed, w)) return QueueingHint::kQueue;
                 }
               }
               return QueueingHint::kQueueSkip;
             }},
            {{EventResource::kNode, kAdd}, {}}};
  }

 private:
  // Built once, copied per node whose ports are taken.
  const Status ports_taken_ =
      Status::Unschedulable(std::string(kReason)).WithPlugin(kNodePortsName);
};

Result<std::unique_ptr<Plugin>> NewNodePorts(const PluginArgs*, Handle&) {
  return std::unique_ptr<Plugin>(std::make_unique<NodePorts>());
}

}  // namespace

PluginRegistration NodePortsRegistration() {
  return MakeRegistration(kNodePortsName, &NewNodePorts);
}

}  // namespace berth
