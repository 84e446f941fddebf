#include "berth/framework/dra.h"

namespace berth {

const DraListers* DraListersOf(const ClusterListers& listers) {
  return dynamic_cast<const DraListers*>(&listers);
}

DraWriter* DraWriterOf(ClusterWriter& writer) { return dynamic_cast<DraWriter*>(&writer); }

}  // namespace berth
