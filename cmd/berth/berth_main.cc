// The berth binary: the command line with the in-tree plugins only.
#include <string_view>

#include "berth/main.h"
#include "runtime/allocator_settings.h"

int main(int argc, char** argv) {
#ifdef BERTH_WITH_MIMALLOC
  // See CMakeLists.txt: mimalloc serves the whole process. `berth compare` is one thread that
  // allocates and frees a recording's objects line after line: giving each freed page back at
  // once (an madvise per page) costs it about a quarter of its CPU, so it keeps mimalloc's
  // defaults (docs/performance.md, "berth compare --replay").
  if (argc < 2 || std::string_view(argv[1]) != "compare") berth::ReturnFreedMemoryPromptly();
#endif
  return berth::Main(argc, argv);
}
