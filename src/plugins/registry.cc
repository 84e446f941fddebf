#include "plugins/registry.h"

#include <cstdio>
#include <cstdlib>

#include "plugins/defaultbinder/defaultbinder.h"
#include "plugins/defaultpreemption/defaultpreemption.h"
#include "plugins/imagelocality/imagelocality.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/networktraffic/networktraffic.h"
#include "plugins/nodeaffinity/nodeaffinity.h"
#include "plugins/nodelabel/nodelabel.h"
#include "plugins/nodename/nodename.h"
#include "plugins/nodeports/nodeports.h"
#include "plugins/nodepreferavoidpods/nodepreferavoidpods.h"
#include "plugins/noderesources/noderesources.h"
#include "plugins/nodeunschedulable/nodeunschedulable.h"
#include "plugins/nodevolumelimits/nodevolumelimits.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/selector_spread.h"
#include "plugins/queuesort/queuesort.h"
#include "plugins/schedulinggates/schedulinggates.h"
#include "plugins/serviceaffinity/serviceaffinity.h"
#include "plugins/tainttoleration/tainttoleration.h"
#include "plugins/volumebinding/volumebinding.h"
#include "plugins/volumerestrictions/volumerestrictions.h"
#include "plugins/volumezone/volumezone.h"

namespace berth {

Registry InTreeRegistry() {
  Registry r;
  for (PluginRegistration reg : {
           SchedulingGatesRegistration(),
           PrioritySortRegistration(),
           NodeUnschedulableRegistration(),
           NodeNameRegistration(),
           TaintTolerationRegistration(),
           NodeAffinityRegistration(),
           NodePortsRegistration(),
           NodeResourcesFitRegistration(),
           VolumeRestrictionsRegistration(),
           NodeVolumeLimitsRegistration(),
           VolumeBindingRegistration(),
           VolumeZoneRegistration(),
           PodTopologySpreadRegistration(),
           InterPodAffinityRegistration(),
           DefaultPreemptionRegistration(),
           NodeResourcesBalancedAllocationRegistration(),
           ImageLocalityRegistration(),
           DefaultBinderRegistration(),
           // Opt-in: not in any default profile.
           NetworkTrafficRegistration(),
           // Legacy (Policy-era configurations): not in any default profile.
           NodeLabelRegistration(),
           NodePreferAvoidPodsRegistration(),
           SelectorSpreadRegistration(),
           ServiceAffinityRegistration(),
       }) {
    // Names are unique by construction; a clash is a programming error caught by tests.
    if (!r.Add(std::move(reg)).ok()) std::abort();
  }
  return r;
}

}  // namespace berth
