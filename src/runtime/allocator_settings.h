// How Berth's binaries configure mimalloc when they are linked with it (BERTH_WITH_MIMALLOC):
// `berth` itself and the benchmark that measures its API server in process, so both run the
// server with the same allocator settings.
#pragma once

#ifdef BERTH_WITH_MIMALLOC
#include <mimalloc.h>

#include <cstdlib>

namespace berth {

// mimalloc keeps memory a thread freed for a while, for that thread to reuse. The daemons run
// dozens of threads (binding, informers, HTTP) that allocate in bursts (a relist, a backlog
// of binds): their memory is given back at once instead, as glibc does with its arenas. The
// MIMALLOC_* variables still win. Calling this also keeps libmimalloc linked: its malloc then
// serves the whole process.
inline void ReturnFreedMemoryPromptly() {
  struct Setting {
    mi_option_t option;
    const char* variable;
    long value;
  };
  const Setting settings[] = {
      {mi_option_page_reset, "MIMALLOC_PAGE_RESET", 1},
      {mi_option_decommit_delay, "MIMALLOC_DECOMMIT_DELAY", 0},
      {mi_option_segment_decommit_delay, "MIMALLOC_SEGMENT_DECOMMIT_DELAY", 0},
      {mi_option_abandoned_page_decommit, "MIMALLOC_ABANDONED_PAGE_DECOMMIT", 1},
  };
  for (const Setting& s : settings)
    if (std::getenv(s.variable) == nullptr) mi_option_set(s.option, s.value);
}

}  // namespace berth
#endif
