// The berth binary: the command line with the in-tree plugins only.
#include "berth/main.h"
#include "runtime/allocator_settings.h"

int main(int argc, char** argv) {
#ifdef BERTH_WITH_MIMALLOC
  // See CMakeLists.txt: mimalloc serves the whole process.
  berth::ReturnFreedMemoryPromptly();
#endif
  return berth::Main(argc, argv);
}
