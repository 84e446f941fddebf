// Cache prefetch hints for the per-node loops (filter, score, and plugins that walk the
// feasible nodes): memory-bound on a large cluster, each NodeInfo is a separate heap object
// spanning several cache lines, and its Node another. The loops call these a few nodes ahead so
// the lines arrive while the current node is evaluated. Hints only: they read nothing a plugin
// would not read and change no result.
#pragma once

#include <cstddef>

#include "berth/framework/node_info.h"

namespace berth {

inline void PrefetchNodeInfo(const NodeInfo* ni) {
  const char* p = reinterpret_cast<const char*>(ni);
  for (size_t off = 0; off < sizeof(NodeInfo); off += 64) __builtin_prefetch(p + off);
}
// Precondition: `ni`'s first cache line is loaded (it was prefetched earlier).
inline void PrefetchNode(const NodeInfo* ni) {
  if (const Node* n = ni->node()) __builtin_prefetch(&n->spec);
}

}  // namespace berth
