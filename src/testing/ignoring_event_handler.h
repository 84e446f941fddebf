// Tests' base for event handlers that watch one sort of event: every ClusterEventHandler call
// does nothing, and a test's handler overrides the ones it records.
#pragma once

#include "berth/framework/cluster.h"

namespace berth::testing {

class IgnoringEventHandler : public ClusterEventHandler {
 public:
  void OnPodAdd(const Ptr<Pod>&) override {}
  void OnPodUpdate(const Ptr<Pod>&, const Ptr<Pod>&) override {}
  void OnPodDelete(const Ptr<Pod>&) override {}
  void OnNodeAdd(const Ptr<Node>&) override {}
  void OnNodeUpdate(const Ptr<Node>&, const Ptr<Node>&) override {}
  void OnNodeDelete(const Ptr<Node>&) override {}
  void OnObjectEvent(const ClusterEvent&, const EventObject&, const EventObject&) override {}
};

}  // namespace berth::testing
