// The ResourceSlices as the scheduler sees them: each device carries, after the taints its
// driver published, the taint of every DeviceTaintRule that selects it. Both cluster clients
// (the API client's informers and the in-memory cluster) keep one, so that the DRA listers list
// the tainted slices and a rule's change reaches the scheduler as updates of the slices whose
// devices it taints or no longer taints. Thread-safe; the slices handed out are immutable.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/device_taint_rule.h"
#include "berth/api/resource_claims.h"
#include "berth/framework/cluster.h"

namespace berth {

// `slice` with the taints of the `rules` that select its devices appended (rules in the order
// given); `slice` itself when no rule selects any of its devices.
Ptr<ResourceSlice> ApplyDeviceTaintRules(const Ptr<ResourceSlice>& slice,
                                         const std::vector<const DeviceTaintRule*>& rules);

class TaintedSlices {
 public:
  // A slice as it was and as it is now (tainted): null before an add and after a delete.
  struct Change {
    Ptr<ResourceSlice> old_slice, new_slice;
  };

  // A slice added or updated (as its driver published it).
  Change PutSlice(Ptr<ResourceSlice> slice);
  // A slice deleted: the change, whose old slice is null when there was none of that name.
  Change RemoveSlice(std::string_view name);
  // A rule added or updated; the changes of the slices whose taints it changed.
  std::vector<Change> PutRule(DeviceTaintRule rule);
  // A rule deleted; likewise.
  std::vector<Change> RemoveRule(std::string_view name);

  // The slices with the rules' taints, in name order.
  std::vector<Ptr<ResourceSlice>> List() const;
  Ptr<ResourceSlice> Get(std::string_view name) const;
  size_t rule_count() const;

 private:
  struct Entry {
    Ptr<ResourceSlice> published, tainted;
  };
  Ptr<ResourceSlice> TaintLocked(const Ptr<ResourceSlice>& slice) const;
  // Re-taints the slices either rule selects a device of, returning those that changed.
  std::vector<Change> RetaintLocked(const DeviceTaintRule* before, const DeviceTaintRule* after);

  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> slices_;
  std::map<std::string, DeviceTaintRule, std::less<>> rules_;
};

}  // namespace berth
