#include "framework/group_member_lister.h"

namespace berth {

std::vector<Ptr<Pod>> ListSchedulingGroupMembers(const ClusterListers& listers, std::string_view ns,
                                                 std::string_view group) {
  if (const auto* index = dynamic_cast<const GroupMemberLister*>(&listers)) {
    return index->ListSchedulingGroupMembers(ns, group);
  }
  std::vector<Ptr<Pod>> out;
  for (auto& p : listers.ListPods()) {
    if (p->metadata.namespace_ == ns && p->spec.scheduling_group &&
        *p->spec.scheduling_group == group) {
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<Ptr<Pod>> ListLabeledGroupMembers(const ClusterListers& listers, std::string_view ns,
                                              std::string_view group) {
  if (const auto* index = dynamic_cast<const GroupMemberLister*>(&listers)) {
    return index->ListLabeledGroupMembers(ns, group);
  }
  std::vector<Ptr<Pod>> out;
  for (auto& p : listers.ListPods()) {
    if (p->metadata.namespace_ != ns) continue;
    auto label = p->metadata.labels.find(kPodGroupLabel);
    if (label != p->metadata.labels.end() && label->second == group) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace berth
