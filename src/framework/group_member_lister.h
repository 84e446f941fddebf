// The pods of one group without walking every pod: GangScheduling and Coscheduling ask in
// PreEnqueue, PreFilter and Permit for each member, so a scan of all pods made a gang of N
// members cost N² pod visits.
//
// Internal to Berth, not part of the plugin SDK: the cluster clients (ApiClusterClient through
// an informer index, InMemoryCluster through a map) implement it beside ClusterListers, found
// with a dynamic_cast, so the SDK's ClusterListers keeps its layout.
//
// Threads: any thread, as ClusterListers.
#pragma once

#include <string_view>
#include <vector>

#include "berth/framework/cluster.h"

namespace berth {

class GroupMemberLister {
 public:
  virtual ~GroupMemberLister() = default;
  // The pods of namespace `ns` whose spec.schedulingGroup.podGroupName is `group`, bound or
  // not, in the order ListPods gives them.
  virtual std::vector<Ptr<Pod>> ListSchedulingGroupMembers(std::string_view ns,
                                                           std::string_view group) const = 0;
  // The pods of namespace `ns` labelled scheduling.x-k8s.io/pod-group=`group` (kPodGroupLabel;
  // scheduler-plugins' PodGroups), in the order ListPods gives them.
  virtual std::vector<Ptr<Pod>> ListLabeledGroupMembers(std::string_view ns,
                                                        std::string_view group) const = 0;
};

// The members of `group` in `ns`: through `listers`' GroupMemberLister when it has one,
// otherwise by a scan of ListPods.
std::vector<Ptr<Pod>> ListSchedulingGroupMembers(const ClusterListers& listers, std::string_view ns,
                                                 std::string_view group);
// The same for ListLabeledGroupMembers.
std::vector<Ptr<Pod>> ListLabeledGroupMembers(const ClusterListers& listers, std::string_view ns,
                                              std::string_view group);

}  // namespace berth
