#include "plugins/registry.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "config/in_tree_plugins.h"
#include "plugins/coscheduling/coscheduling.h"
#include "plugins/defaultbinder/defaultbinder.h"
#include "plugins/defaultpreemption/defaultpreemption.h"
#include "plugins/dynamicresources/dynamicresources.h"
#include "plugins/gangscheduling/gangscheduling.h"
#include "plugins/imagelocality/imagelocality.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/networktraffic/networktraffic.h"
#include "plugins/nodeaffinity/nodeaffinity.h"
#include "plugins/nodedeclaredfeatures/nodedeclaredfeatures.h"
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

Registry InTreeRegistry() { return InTreeRegistry(config::FeatureGates()); }

Registry InTreeRegistry(const config::FeatureGates& gates) {
  // The factory column of the in-tree table (config/in_tree_plugins.h): names, args decoders and
  // default sets are the table's; each plugin's registration adds how to build it.
  PluginRegistration registrations[] = {
      SchedulingGatesRegistration(),
      PrioritySortRegistration(),
      NodeUnschedulableRegistration(gates),
      NodeNameRegistration(),
      TaintTolerationRegistration(gates),
      NodeAffinityRegistration(),
      NodePortsRegistration(),
      NodeResourcesFitRegistration(gates),
      VolumeRestrictionsRegistration(),
      NodeVolumeLimitsRegistration(gates),
      VolumeBindingRegistration(gates),
      VolumeZoneRegistration(),
      PodTopologySpreadRegistration(gates),
      InterPodAffinityRegistration(),
      DefaultPreemptionRegistration(gates),
      NodeResourcesBalancedAllocationRegistration(gates),
      ImageLocalityRegistration(),
      DefaultBinderRegistration(),
      NetworkTrafficRegistration(),
      NodeLabelRegistration(),
      NodePreferAvoidPodsRegistration(),
      SelectorSpreadRegistration(),
      ServiceAffinityRegistration(),
      CoschedulingRegistration(),
      GangSchedulingRegistration(),
      DynamicResourcesRegistration(gates),
      NodeDeclaredFeaturesRegistration(gates),
  };
  Registry r;
  size_t added = 0;
  for (const config::InTreePlugin& plugin : config::InTreePlugins()) {
    if (!plugin.Registered()) continue;
    auto it = std::find_if(std::begin(registrations), std::end(registrations),
                           [&](const PluginRegistration& reg) { return reg.name == plugin.name; });
    // A table row without a registration, a registration outside the table or a clash is a
    // programming error caught by tests.
    if (it == std::end(registrations) || !r.Add(std::move(*it)).ok()) std::abort();
    ++added;
  }
  if (added != std::size(registrations)) std::abort();
  return r;
}

}  // namespace berth
